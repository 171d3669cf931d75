// Records the full configuration search space of GPU GROUP BY on this GPU:
// for G = 2^0, 2^2, ..., 2^26 groups, every variant that can run, every
// launch configuration of the tuner's grid (threads per block 32..1024 x
// blocks per SM 1..32, powers of two; fill factor 25/50/83 % for hash
// variants; rows per thread 1/2/4/8), several chunks each, timed one chunk at
// a time exactly as the tuner sees them (consume() of one device-resident
// chunk, which synchronizes). Writes the CSV that tuner_replay_bench reads
// (bench/tuner/recorded_space.hpp) and checks every configuration's group
// count against the host's.
//
// Budget guards (a device lease is short): a configuration whose first chunk
// is more than --skip-factor times slower than the cell's fastest first chunk
// so far is recorded with that one repetition only (the tuner's measurement of
// it would stop there as well: it is pruned at once); with --deadline-s, the
// sweep stops before the deadline, drops the unfinished cell and still writes
// the file. Per cell it also times a tiny chunk (--probe-rows) with a fixed
// configuration: the per-chunk fixed cost (launch, synchronization, overflow
// check) that the chunk size must dwarf.
//
// usage: sweep_spaces [--out spaces.csv] [--chunk-rows N] [--reps R]
//                     [--max-log2-groups 26] [--device 0] [--query-chunks 64]
//                     [--skip-factor 3] [--deadline-s 0] [--probe-rows 4096]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bench/tuner/recorded_space.hpp"
#include "gpu/rules/device_info.hpp"
#include "gpu/group_by.hpp"
#include "gpu/tuner/search_space.hpp"
#include "gpu/tuner/chunk_tuner.hpp"
#include "gpu/rules/variant_rules.hpp"

namespace tb = tally::bench;
namespace tg = tally::gpu;

namespace {

#define SWEEP_CUDA(call)                                                                              \
  do {                                                                                                \
    cudaError_t err_ = (call);                                                                        \
    if (err_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_));    \
      std::exit(2);                                                                                   \
    }                                                                                                 \
  } while (0)

template <class T>
struct DeviceArray {
  T* ptr = nullptr;
  explicit DeviceArray(size_t n) { SWEEP_CUDA(cudaMalloc(&ptr, n * sizeof(T))); }
  ~DeviceArray() { cudaFree(ptr); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

bool hashed(tg::Variant v) {
  return v == tg::Variant::shared_hash || v == tg::Variant::global_hash || v == tg::Variant::partitioned_hash;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path = "spaces.csv";
  int64_t chunk_rows = int64_t{1} << 24;
  int reps = 5;
  int max_log2_groups = 26;
  int ordinal = 0;
  int query_chunks = 64;
  double skip_factor = 3.0;
  double deadline_s = 0;  // 0 = none
  int64_t probe_rows = 4096;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "flag %s needs a value\n", flag.c_str());
      return 2;
    }
    if (flag == "--out") out_path = argv[i + 1];
    else if (flag == "--chunk-rows") chunk_rows = std::stoll(argv[i + 1]);
    else if (flag == "--reps") reps = std::stoi(argv[i + 1]);
    else if (flag == "--max-log2-groups") max_log2_groups = std::stoi(argv[i + 1]);
    else if (flag == "--device") ordinal = std::stoi(argv[i + 1]);
    else if (flag == "--query-chunks") query_chunks = std::stoi(argv[i + 1]);
    else if (flag == "--skip-factor") skip_factor = std::stod(argv[i + 1]);
    else if (flag == "--deadline-s") deadline_s = std::stod(argv[i + 1]);
    else if (flag == "--probe-rows") probe_rows = std::stoll(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (chunk_rows <= 0 || reps <= 0 || max_log2_groups < 0 || max_log2_groups > 30 || probe_rows <= 0 ||
      probe_rows > chunk_rows || skip_factor < 1) {
    std::fprintf(stderr, "bad arguments\n");
    return 2;
  }
  std::fprintf(stderr, "sweep: chunk %lld rows, %d repetitions, G = 2^0..2^%d step 2, skip factor %.1f, deadline %.0f s\n",
               static_cast<long long>(chunk_rows), reps, max_log2_groups, skip_factor, deadline_s);
  const auto t_start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count(); };
  if (tg::device_count() <= ordinal) {
    std::fprintf(stderr, "no CUDA device %d\n", ordinal);
    return 2;
  }
  SWEEP_CUDA(cudaSetDevice(ordinal));
  const tg::DeviceInfo device = tg::query_device(ordinal);

  tb::RecordedSpaces spaces;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  spaces.metadata["source"] = std::string("sweep_spaces ") + date;
  spaces.metadata["device"] = device.name;
  spaces.metadata["fingerprint"] = device.fingerprint();
  spaces.metadata["compute_major"] = std::to_string(device.compute_major);
  spaces.metadata["compute_minor"] = std::to_string(device.compute_minor);
  spaces.metadata["sm_count"] = std::to_string(device.sm_count);
  spaces.metadata["warp_size"] = std::to_string(device.warp_size);
  spaces.metadata["max_threads_per_block"] = std::to_string(device.max_threads_per_block);
  spaces.metadata["max_threads_per_sm"] = std::to_string(device.max_threads_per_sm);
  spaces.metadata["max_blocks_per_sm"] = std::to_string(device.max_blocks_per_sm);
  spaces.metadata["shared_memory_per_block"] = std::to_string(device.shared_memory_per_block_optin);
  spaces.metadata["shared_memory_per_sm"] = std::to_string(device.shared_memory_per_sm);
  spaces.metadata["l2_cache_bytes"] = std::to_string(device.l2_bytes);
  spaces.metadata["global_memory_bytes"] = std::to_string(device.total_memory);
  spaces.metadata["driver_version"] = std::to_string(device.driver_version);
  spaces.metadata["chunk_rows"] = std::to_string(chunk_rows);
  spaces.metadata["query_chunks"] = std::to_string(query_chunks);
  spaces.metadata["repetitions"] = std::to_string(reps);
  spaces.metadata["skip_factor"] = std::to_string(skip_factor);
  spaces.metadata["key_bytes"] = "4";
  spaces.metadata["state_bytes"] = "16";  // count(*) + sum(int4) as int64
  spaces.metadata["query"] = "SELECT k, count(*), sum(v) GROUP BY k; k int4 uniform in [0, G), v int4";

  // SELECT k, count(*), sum(v) FROM t GROUP BY k
  tg::GroupBySpec spec;
  spec.key_type = tg::KeyType::int32;
  spec.columns = {tg::ValueColumnSpec{tg::ValueType::int32, false}};
  spec.aggregates = {tg::AggregateSpec{tg::AggOp::count_star, -1}, tg::AggregateSpec{tg::AggOp::sum, 0}};

  const auto rows = static_cast<size_t>(chunk_rows);
  std::vector<int32_t> keys(rows), values(rows);
  DeviceArray<int32_t> d_keys(rows), d_values(rows);
  const auto tpb_values = tg::SearchSpace::powers_of_two(32, std::min(1024, device.max_threads_per_block));
  const auto bps_values = tg::SearchSpace::powers_of_two(1, std::max(1, device.max_blocks_per_sm));
  const std::vector<int32_t> fill_values = {25, 50, 83};
  const std::vector<int32_t> rpt_values = {1, 2, 4, 8};
  int failures = 0;
  long configurations = 0, single_rep = 0;
  bool out_of_time = false;
  std::vector<double> overhead_ratios;

  for (int lg = 0; lg <= max_log2_groups && !out_of_time; lg += 2) {
    const uint64_t groups = uint64_t{1} << lg;
    std::mt19937_64 rng(1000 + lg);
    std::vector<uint8_t> seen(groups, 0);
    size_t distinct = 0;
    for (size_t i = 0; i < rows; ++i) {
      keys[i] = static_cast<int32_t>(rng() % groups);
      values[i] = static_cast<int32_t>(rng() % 1000);
      if (!seen[keys[i]]) {
        seen[keys[i]] = 1;
        ++distinct;
      }
    }
    SWEEP_CUDA(cudaMemcpy(d_keys.ptr, keys.data(), rows * sizeof(int32_t), cudaMemcpyHostToDevice));
    SWEEP_CUDA(cudaMemcpy(d_values.ptr, values.data(), rows * sizeof(int32_t), cudaMemcpyHostToDevice));
    tg::ChunkPointers chunk;
    chunk.rows = chunk_rows;
    chunk.key = {d_keys.ptr, nullptr};
    chunk.values = {tg::ColumnPointer{d_values.ptr, nullptr}};
    chunk.key_range = tg::KeyRange{0, static_cast<int64_t>(groups) - 1};
    const tg::ChunkFacts facts{static_cast<uint64_t>(chunk_rows), chunk.key_range, groups};

    for (tg::Variant variant : tg::kAllVariants) {
      if (out_of_time) break;
      std::string why;
      if (!tg::can_use(variant, spec, device, facts, &why)) {
        std::fprintf(stderr, "G=2^%d %s: skipped (%s)\n", lg, std::string(tg::variant_name(variant)).c_str(), why.c_str());
        continue;
      }
      tg::TableOptions options;
      options.estimated_groups = groups;
      tg::GroupByAggregator aggregator(device, spec, options);
      tb::SpaceCell cell{std::string(tg::variant_name(variant)), groups, {}};
      const auto t_cell = std::chrono::steady_clock::now();
      // Fixed cost of one chunk: a tiny chunk with a middle-of-the-grid configuration.
      std::vector<double> probe;
      try {
        tg::ChunkPointers tiny = chunk;
        tiny.rows = probe_rows;
        tg::VariantConfig mid;
        mid.launch.threads_per_block = 256;
        mid.launch.blocks_per_sm = 4;
        mid.launch.fill_factor_percent = 50;
        mid.launch.rows_per_thread = 4;
        for (int r = 0; r < 7; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          aggregator.consume(tiny, variant, mid);
          aggregator.synchronize();  // consume() enqueues only
          probe.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "G=2^%d %s probe: %s\n", lg, cell.variant.c_str(), e.what());
      }
      double best_first = INFINITY;
      for (int32_t tpb : tpb_values) {
        for (int32_t bps : bps_values) {
          for (int32_t fill : hashed(variant) ? fill_values : std::vector<int32_t>{50}) {
            for (int32_t rpt : rpt_values) {
              if (deadline_s > 0 && elapsed() > deadline_s) out_of_time = true;
              if (out_of_time) break;
              tg::VariantConfig config;
              config.launch.threads_per_block = tpb;
              config.launch.blocks_per_sm = bps;
              config.launch.fill_factor_percent = fill;
              config.launch.rows_per_thread = rpt;
              aggregator.reset();
              auto& times = cell.times[config.launch];
              try {
                for (int r = 0; r < reps; ++r) {
                  const auto t0 = std::chrono::steady_clock::now();
                  aggregator.consume(chunk, variant, config);
                  aggregator.synchronize();  // consume() enqueues only: time what the kernels take
                  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                  times.push_back(seconds / static_cast<double>(chunk_rows));
                  if (r == 0) {
                    // Hopeless configuration: one repetition is all the tuner would see of it.
                    if (seconds > skip_factor * best_first) {
                      ++single_rep;
                      break;
                    }
                    best_first = std::min(best_first, seconds);
                  }
                }
              } catch (const std::exception& e) {
                std::fprintf(stderr, "G=2^%d %s %s: %s\n", lg, cell.variant.c_str(), tg::to_string(config.launch).c_str(),
                             e.what());
                cell.times.erase(config.launch);  // the replay treats it as unusable
                continue;
              }
              ++configurations;
              const uint64_t got = aggregator.group_count();
              if (got != distinct) {
                ++failures;
                std::fprintf(stderr, "WRONG: G=2^%d %s %s: %llu groups, expected %zu\n", lg, cell.variant.c_str(),
                             tg::to_string(config.launch).c_str(), static_cast<unsigned long long>(got), distinct);
              }
            }
          }
        }
      }
      if (out_of_time) {
        std::fprintf(stderr, "G=2^%d %s: deadline reached after %.1f s, unfinished cell dropped\n", lg,
                     cell.variant.c_str(), elapsed());
        break;
      }
      double best_chunk = INFINITY;
      for (const auto& [c, t] : cell.times) best_chunk = std::min(best_chunk, median_of(t) * static_cast<double>(chunk_rows));
      const double fixed = median_of(probe);
      if (fixed > 0 && std::isfinite(best_chunk)) overhead_ratios.push_back(best_chunk / fixed);
      std::fprintf(stderr,
                   "G=2^%d %-13s %4zu configurations in %.1f s; best chunk %.1f us, %lld-row chunk %.1f us (x%.1f); "
                   "elapsed %.0f s\n",
                   lg, cell.variant.c_str(), cell.times.size(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t_cell).count(), 1e6 * best_chunk,
                   static_cast<long long>(probe_rows), 1e6 * fixed, fixed > 0 ? best_chunk / fixed : 0.0, elapsed());
      spaces.cells.push_back(std::move(cell));
    }
  }
  std::ofstream out(out_path);
  tb::write_spaces(out, spaces);
  std::printf("%ld configurations in %zu cells recorded to %s in %.0f s (%ld with one repetition), %d wrong group counts%s\n",
              configurations, spaces.cells.size(), out_path.c_str(), elapsed(), single_rep, failures,
              out_of_time ? "; DEADLINE REACHED: sweep incomplete" : "");
  if (!overhead_ratios.empty()) {
    std::printf("best chunk time / fixed per-chunk cost: min %.1f, median %.1f\n",
                *std::min_element(overhead_ratios.begin(), overhead_ratios.end()), median_of(overhead_ratios));
  }
  return failures == 0 ? 0 : 1;
}
