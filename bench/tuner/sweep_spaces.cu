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
// usage: sweep_spaces [--out spaces.csv] [--chunk-rows N] [--reps R]
//                     [--max-log2-groups 26] [--device 0] [--query-chunks 64]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "bench/tuner/recorded_space.hpp"
#include "gpu/device_info.hpp"
#include "gpu/group_by.hpp"
#include "gpu/tuner/search_space.hpp"
#include "gpu/tuner_bridge.hpp"
#include "gpu/variant_rules.hpp"

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
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--out") out_path = argv[i + 1];
    else if (flag == "--chunk-rows") chunk_rows = std::stoll(argv[i + 1]);
    else if (flag == "--reps") reps = std::stoi(argv[i + 1]);
    else if (flag == "--max-log2-groups") max_log2_groups = std::stoi(argv[i + 1]);
    else if (flag == "--device") ordinal = std::stoi(argv[i + 1]);
    else if (flag == "--query-chunks") query_chunks = std::stoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (tg::device_count() <= ordinal) {
    std::fprintf(stderr, "no CUDA device %d\n", ordinal);
    return 2;
  }
  SWEEP_CUDA(cudaSetDevice(ordinal));
  const tg::DeviceInfo device = tg::query_device(ordinal);
  const tg::DeviceProperties props = tg::to_device_properties(device);

  tb::RecordedSpaces spaces;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  spaces.metadata["source"] = std::string("sweep_spaces ") + date;
  spaces.metadata["device"] = props.name;
  spaces.metadata["fingerprint"] = props.fingerprint();
  spaces.metadata["compute_major"] = std::to_string(props.compute_major);
  spaces.metadata["compute_minor"] = std::to_string(props.compute_minor);
  spaces.metadata["sm_count"] = std::to_string(props.sm_count);
  spaces.metadata["warp_size"] = std::to_string(props.warp_size);
  spaces.metadata["max_threads_per_block"] = std::to_string(props.max_threads_per_block);
  spaces.metadata["max_threads_per_sm"] = std::to_string(props.max_threads_per_sm);
  spaces.metadata["max_blocks_per_sm"] = std::to_string(props.max_blocks_per_sm);
  spaces.metadata["shared_memory_per_block"] = std::to_string(props.shared_memory_per_block);
  spaces.metadata["shared_memory_per_sm"] = std::to_string(props.shared_memory_per_sm);
  spaces.metadata["l2_cache_bytes"] = std::to_string(props.l2_cache_bytes);
  spaces.metadata["global_memory_bytes"] = std::to_string(props.global_memory_bytes);
  spaces.metadata["driver_version"] = std::to_string(props.driver_version);
  spaces.metadata["chunk_rows"] = std::to_string(chunk_rows);
  spaces.metadata["query_chunks"] = std::to_string(query_chunks);
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
  const auto tpb_values = tg::SearchSpace::powers_of_two(32, std::min(1024, props.max_threads_per_block));
  const auto bps_values = tg::SearchSpace::powers_of_two(1, std::max(1, props.max_blocks_per_sm));
  const std::vector<int32_t> fill_values = {25, 50, 83};
  const std::vector<int32_t> rpt_values = {1, 2, 4, 8};
  int failures = 0;
  long configurations = 0;

  for (int lg = 0; lg <= max_log2_groups; lg += 2) {
    const uint64_t groups = uint64_t{1} << lg;
    std::mt19937_64 rng(1000 + lg);
    std::unordered_set<int32_t> distinct;
    for (size_t i = 0; i < rows; ++i) {
      keys[i] = static_cast<int32_t>(rng() % groups);
      values[i] = static_cast<int32_t>(rng() % 1000);
    }
    for (int32_t k : keys) distinct.insert(k);
    SWEEP_CUDA(cudaMemcpy(d_keys.ptr, keys.data(), rows * sizeof(int32_t), cudaMemcpyHostToDevice));
    SWEEP_CUDA(cudaMemcpy(d_values.ptr, values.data(), rows * sizeof(int32_t), cudaMemcpyHostToDevice));
    tg::ChunkPointers chunk;
    chunk.rows = chunk_rows;
    chunk.key = {d_keys.ptr, nullptr};
    chunk.values = {tg::ColumnPointer{d_values.ptr, nullptr}};
    chunk.key_range = tg::KeyRange{0, static_cast<int64_t>(groups) - 1};
    const tg::ChunkFacts facts{static_cast<uint64_t>(chunk_rows), chunk.key_range, groups};

    for (tg::Variant variant : tg::kAllVariants) {
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
      for (int32_t tpb : tpb_values) {
        for (int32_t bps : bps_values) {
          for (int32_t fill : hashed(variant) ? fill_values : std::vector<int32_t>{50}) {
            for (int32_t rpt : rpt_values) {
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
                  aggregator.consume(chunk, variant, config);  // synchronizes at its end
                  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                  times.push_back(seconds / static_cast<double>(chunk_rows));
                }
              } catch (const std::exception& e) {
                std::fprintf(stderr, "G=2^%d %s %s: %s\n", lg, cell.variant.c_str(), tg::to_string(config.launch).c_str(),
                             e.what());
                cell.times.erase(config.launch);  // the replay treats it as unusable
                continue;
              }
              ++configurations;
              const uint64_t got = aggregator.group_count();
              if (got != distinct.size()) {
                ++failures;
                std::fprintf(stderr, "WRONG: G=2^%d %s %s: %llu groups, expected %zu\n", lg, cell.variant.c_str(),
                             tg::to_string(config.launch).c_str(), static_cast<unsigned long long>(got), distinct.size());
              }
            }
          }
        }
      }
      std::fprintf(stderr, "G=2^%d %-13s %4zu configurations in %.1f s\n", lg, cell.variant.c_str(), cell.times.size(),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t_cell).count());
      spaces.cells.push_back(std::move(cell));
    }
  }
  std::ofstream out(out_path);
  tb::write_spaces(out, spaces);
  std::printf("%ld configurations recorded to %s, %d wrong group counts\n", configurations, out_path.c_str(), failures);
  return failures == 0 ? 0 : 1;
}
