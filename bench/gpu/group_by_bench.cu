// GPU GROUP BY benchmark (issue 5): N rows of (int4 key, int4 value) resident
// in device memory, G = 2^0, 2^2, ..., 2^26 groups, dense keys (uniform in
// [0,G)) and sparse keys (G distinct values over the whole int4 range). Per G:
// time, rows/s and fraction of the pure-read bandwidth measured in the same
// run, for Tally's rule-chosen variant and for two baselines measured in the
// same run (CUB radix sort + reduce-by-key; one global linear-probing table
// with atomics launched as #SMs x 1024 threads). Every result is checked
// against a CPU reference. Prints tables; --csv writes every measurement.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <string>
#include <thread>
#include <thrust/iterator/transform_iterator.h>
#include <vector>

#include "bench/gpu/bench_data.hpp"
#include "bench/gpu/bench_reference.hpp"
#include "gpu/aggregator/kernels/views.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/rules/device_info.hpp"
#include "gpu/group_by.hpp"
#include "gpu/rules/variant_rules.hpp"

namespace tb = tally::bench;
namespace tg = tally::gpu;

namespace {

// ---- data and the read ceiling -----------------------------------------------

__global__ void generate_kernel(int32_t* keys, int32_t* values, uint64_t n, uint64_t groups, bool sparse,
                                uint64_t key_seed, uint64_t value_seed) {
  for (uint64_t r = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    keys[r] = tb::key_of(tb::group_of(r, key_seed, groups), sparse);
    values[r] = tb::value_of(r, value_seed);
  }
}

// Reads keys and values once with 16-byte loads: the ceiling for any
// aggregation that must read both columns.
__global__ void read_kernel(const int4* keys, const int4* values, uint64_t n4, int* sink) {
  int acc = 0;
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const int4 k = keys[i];
    const int4 v = values[i];
    acc ^= k.x ^ k.y ^ k.z ^ k.w ^ v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) sink[0] = acc;  // practically never: keeps the loads alive
}

// ---- baseline: one global linear-probing table, atomics -----------------------

constexpr int32_t kEmpty = INT32_MIN;

// The literature's baseline: grid-stride, one row per thread per step, CAS on
// the key, atomicAdd on the 64-bit sum and count. (No key equals kEmpty here:
// the generator never produces INT32_MIN as a dense or sparse key for G <= 2^26.)
__global__ void baseline_global_kernel(const int32_t* keys, const int32_t* values, uint64_t n, int32_t* tkeys,
                                       unsigned long long* tsum, unsigned long long* tcount, uint64_t mask) {
  for (uint64_t r = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<uint64_t>(gridDim.x) * blockDim.x) {
    const int32_t k = keys[r];
    uint64_t h = tally::gpu::kernels::fmix32(static_cast<uint32_t>(k)) & mask;  // murmur3 finalizer
    while (true) {
      const int32_t cur = tkeys[h];
      if (cur == k) break;
      if (cur == kEmpty) {
        const int32_t old = atomicCAS(tkeys + h, kEmpty, k);
        if (old == kEmpty || old == k) break;
      }
      h = (h + 1) & mask;
    }
    atomicAdd(tsum + h, static_cast<unsigned long long>(static_cast<int64_t>(values[r])));
    atomicAdd(tcount + h, 1ull);
  }
}

__global__ void fill_i32(int32_t* p, uint64_t n, int32_t v) {
  for (uint64_t i = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
    p[i] = v;
}

struct ToInt64 {
  __host__ __device__ int64_t operator()(int32_t v) const { return v; }
};

// ---- timing --------------------------------------------------------------------

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    TALLY_CUDA_CHECK(cudaEventCreate(&a));
    TALLY_CUDA_CHECK(cudaEventCreate(&b));
  }
  ~Timer() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  template <class F>
  double median_ms(int reps, F&& f) {
    f();  // warm-up: allocations, module load, pool growth
    TALLY_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      TALLY_CUDA_CHECK(cudaEventRecord(a));
      f();
      TALLY_CUDA_CHECK(cudaEventRecord(b));
      TALLY_CUDA_CHECK(cudaEventSynchronize(b));
      float ms = 0;
      TALLY_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
};

struct Options {
  int log2_rows = 28;
  int min_log2_groups = 0;
  int max_log2_groups = 26;
  int step = 2;
  int reps = 5;
  bool all_variants = true;
  std::string kinds = "dense,sparse";
  std::string csv;
  std::string tally_config;  // "tpb=512,bps=2,rpt=4,ff=50": overrides of the rule-based configuration
  // More configurations of the rule-chosen variant, each timed and checked on
  // the same data in the same run ("rpt=4;ff=50;dpbits=-1"), for sweeps.
  std::vector<std::string> sweep;
};

// Applies "key=value,..." overrides (tpb, bps, rpt, ff, pbits, replicas; dpbits
// adds to the rule's partition bits) to a configuration, for sweeping one
// parameter of the chosen variant by hand.
tg::VariantConfig with_overrides(tg::VariantConfig c, const std::string& spec) {
  size_t at = 0;
  while (at < spec.size()) {
    const size_t end = std::min(spec.find(',', at), spec.size());
    const std::string item = spec.substr(at, end - at);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "bad --tally-config item '%s'\n", item.c_str());
      std::exit(2);
    }
    const std::string k = item.substr(0, eq);
    const int v = std::stoi(item.substr(eq + 1));
    if (k == "tpb") c.launch.threads_per_block = v;
    else if (k == "bps") c.launch.blocks_per_sm = v;
    else if (k == "rpt") c.launch.rows_per_thread = v;
    else if (k == "ff") c.launch.fill_factor_percent = v;
    else if (k == "pbits") c.partition_bits = v;
    else if (k == "dpbits") c.partition_bits += v;
    else if (k == "replicas") c.shared_replicas = v;
    else {
      std::fprintf(stderr, "unknown --tally-config key '%s'\n", k.c_str());
      std::exit(2);
    }
    at = end + 1;
  }
  return c;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value for %s\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--log2-rows") o.log2_rows = std::stoi(next());
    else if (a == "--min-log2-groups") o.min_log2_groups = std::stoi(next());
    else if (a == "--max-log2-groups") o.max_log2_groups = std::stoi(next());
    else if (a == "--step") o.step = std::stoi(next());
    else if (a == "--reps") o.reps = std::stoi(next());
    else if (a == "--kinds") o.kinds = next();
    else if (a == "--best-only") o.all_variants = false;
    else if (a == "--csv") o.csv = next();
    else if (a == "--tally-config") o.tally_config = next();
    else if (a == "--sweep") {
      const std::string list = next();
      size_t at = 0;
      while (at <= list.size()) {
        const size_t end = std::min(list.find(';', at), list.size());
        if (end > at) o.sweep.push_back(list.substr(at, end - at));
        at = end + 1;
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--log2-rows 28] [--min-log2-groups 0] [--max-log2-groups 26] [--step 2] [--reps 5] "
                   "[--kinds dense,sparse] [--best-only] [--csv FILE] [--tally-config tpb=512,bps=2,rpt=4,ff=50] "
                   "[--sweep 'rpt=4;ff=50;dpbits=-1']\n",
                   argv[0]);
      std::exit(2);
    }
  }
  return o;
}

struct Row {
  std::string kind;
  int lg = 0;
  std::string variant;
  std::string config;
  double tally_ms = 0, sort_ms = 0, global_ms = 0;
  bool ok = true;
};

// Group index of a result key (inverse of key_of).
uint64_t index_of(int64_t key, bool sparse) {
  const uint32_t u = static_cast<uint32_t>(static_cast<int32_t>(key));
  return sparse ? static_cast<uint32_t>(u * tb::spread_inverse()) : u;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  if (tg::device_count() == 0) {
    std::printf("gpu_group_by_bench: no CUDA device; nothing measured\n");
    return 0;
  }
  try {
    const tg::DeviceInfo dev = tg::query_device(0);
    const uint64_t n = uint64_t{1} << opt.log2_rows;
    const unsigned cpu_threads = std::max(1u, std::thread::hardware_concurrency());
    char date[64];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf("# gpu_group_by_bench  %s\n# device: %s\n# N = 2^%d rows of (int4 key, int4 value), %d reps, median\n",
                date, dev.describe().c_str(), opt.log2_rows, opt.reps);
    FILE* csv = opt.csv.empty() ? nullptr : std::fopen(opt.csv.c_str(), "w");
    if (csv) std::fprintf(csv, "kind,log2_groups,engine,variant,config,ms,rows_per_s,fraction_of_read_bw,check\n");

    int32_t *keys = nullptr, *values = nullptr, *sink = nullptr;
    TALLY_CUDA_CHECK(cudaMalloc(&keys, n * 4));
    TALLY_CUDA_CHECK(cudaMalloc(&values, n * 4));
    TALLY_CUDA_CHECK(cudaMalloc(&sink, 4));
    const int fill_grid = dev.sm_count * 8;
    const uint64_t value_seed = 0x5eed0001;
    Timer timer;

    // Baseline scratch (sort + reduce-by-key).
    int32_t *skeys = nullptr, *svals = nullptr, *ukeys = nullptr;
    int64_t* usums = nullptr;
    int64_t* nruns = nullptr;
    TALLY_CUDA_CHECK(cudaMalloc(&skeys, n * 4));
    TALLY_CUDA_CHECK(cudaMalloc(&svals, n * 4));
    TALLY_CUDA_CHECK(cudaMalloc(&ukeys, n * 4));
    TALLY_CUDA_CHECK(cudaMalloc(&usums, n * 8));
    TALLY_CUDA_CHECK(cudaMalloc(&nruns, 8));
    size_t sort_temp = 0, reduce_temp = 0;
    TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_temp, keys, skeys, values, svals, n));
    auto vals64 = thrust::make_transform_iterator(svals, ToInt64{});
    TALLY_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, reduce_temp, skeys, ukeys, vals64, usums, nruns,
                                                    cuda::std::plus<int64_t>{}, n));
    void* temp = nullptr;
    TALLY_CUDA_CHECK(cudaMalloc(&temp, std::max(sort_temp, reduce_temp)));

    std::vector<Row> rows;
    bool all_ok = true;
    for (const std::string kind : {std::string("dense"), std::string("sparse")}) {
      if (opt.kinds.find(kind) == std::string::npos) continue;
      const bool sparse = kind == "sparse";
      std::printf("\n## %s keys\n", kind.c_str());
      std::printf("%-7s %-12s %9s %9s %7s %9s %9s %8s %s\n", "G", "tally", "ms", "Grows/s", "%read", "sort_ms",
                  "global_ms", "speedup", "check");
      for (int lg = opt.min_log2_groups; lg <= opt.max_log2_groups; lg += opt.step) {
        const uint64_t groups = uint64_t{1} << lg;
        const uint64_t key_seed = 0xC0FFEEull + static_cast<uint64_t>(lg) * 1315423911ull + (sparse ? 77 : 0);
        generate_kernel<<<fill_grid, 256>>>(keys, values, n, groups, sparse, key_seed, value_seed);
        TALLY_CUDA_CHECK_LAUNCH("generate_kernel");
        TALLY_CUDA_CHECK(cudaDeviceSynchronize());
        const tb::Reference ref = tb::compute_reference(n, groups, key_seed, value_seed, cpu_threads);

        const double read_ms = timer.median_ms(opt.reps, [&] {
          read_kernel<<<fill_grid, 256>>>(reinterpret_cast<const int4*>(keys), reinterpret_cast<const int4*>(values),
                                          n / 4, sink);
        });
        const double ideal_rows_per_ms = static_cast<double>(n) / read_ms;

        // Tally, rule-chosen variant. The key range is what the catalog keeps
        // per chunk (min/max statistics); the group estimate is exact here.
        tg::GroupBySpec spec;
        spec.key_type = tg::KeyType::int32;
        spec.columns = {{tg::ValueType::int32, false}};
        spec.aggregates = {{tg::AggOp::sum, 0}, {tg::AggOp::count_star, -1}};
        tg::ChunkPointers chunk;
        chunk.rows = static_cast<int64_t>(n);
        chunk.key.data = keys;
        chunk.values = {tg::ColumnPointer{values, nullptr}};
        tg::ChunkFacts facts;
        facts.rows = n;
        facts.estimated_groups = groups;
        {
          tg::GroupByAggregator probe(dev, spec, tg::TableOptions{});
          chunk.key_range = probe.measure_key_range(chunk);  // what the catalog's chunk statistics hold
        }
        facts.key_range = chunk.key_range;
        // Rule-based table options for a variant; one launch for the whole
        // 2^28-row chunk (spill and sort scratch sized for it).
        auto table_options = [&](tg::Variant v) {
          tg::TableOptions t = tg::default_table_options(v, spec, dev, facts);
          t.max_rows_per_launch = n;
          return t;
        };

        auto check_tally = [&](tg::GroupByAggregator& a) {
          const tg::GroupByResult r = a.finish();
          if (r.groups() != ref.present) return false;
          for (size_t g = 0; g < r.groups(); ++g) {
            if (r.key_is_null[g]) return false;
            const uint64_t u = index_of(r.keys[g], sparse);
            if (u >= groups || r.aggregates[0].value_at(g) != ref.sum[u] || r.aggregates[1].value_at(g) != ref.count[u])
              return false;
          }
          return true;
        };
        tg::LaunchReport last_report;
        auto run_variant = [&](tg::Variant v, const tg::VariantConfig& c, tg::GroupByAggregator& a) {
          return timer.median_ms(opt.reps, [&] {
            a.reset();
            last_report = a.consume(chunk, v, c);
            a.finish_device();
          });
        };

        const tg::Variant best = tg::choose_variant(spec, dev, facts);
        const tg::VariantConfig best_cfg =
            with_overrides(tg::default_launch_config(best, spec, dev, facts), opt.tally_config);
        tg::GroupByAggregator agg(dev, spec, table_options(best));
        const double tally_ms = run_variant(best, best_cfg, agg);
        const tg::LaunchReport best_report = last_report;
        const bool tally_ok = check_tally(agg);

        // Baseline 1: CUB radix sort + reduce-by-key.
        const double sort_ms = timer.median_ms(opt.reps, [&] {
          size_t t1 = sort_temp, t2 = reduce_temp;
          TALLY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, t1, keys, skeys, values, svals, n));
          TALLY_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(temp, t2, skeys, ukeys, vals64, usums, nruns,
                                                          cuda::std::plus<int64_t>{}, n));
        });
        bool sort_ok = true;
        {
          int64_t runs = 0;
          TALLY_CUDA_CHECK(cudaMemcpy(&runs, nruns, 8, cudaMemcpyDeviceToHost));
          std::vector<int32_t> hk(static_cast<size_t>(runs));
          std::vector<int64_t> hs(static_cast<size_t>(runs));
          TALLY_CUDA_CHECK(cudaMemcpy(hk.data(), ukeys, hk.size() * 4, cudaMemcpyDeviceToHost));
          TALLY_CUDA_CHECK(cudaMemcpy(hs.data(), usums, hs.size() * 8, cudaMemcpyDeviceToHost));
          sort_ok = static_cast<uint64_t>(runs) == ref.present;
          for (size_t i = 0; sort_ok && i < hk.size(); ++i) {
            const uint64_t u = index_of(hk[i], sparse);
            sort_ok = u < groups && hs[i] == ref.sum[u];
          }
        }

        // Baseline 2: global linear probing with atomics, #SMs x 1024 threads,
        // table at fill 0.5; the table's initialization is part of its time.
        const uint64_t cap = std::max<uint64_t>(1024, std::bit_ceil(2 * groups));
        int32_t* tkeys = nullptr;
        unsigned long long *tsum = nullptr, *tcount = nullptr;
        TALLY_CUDA_CHECK(cudaMalloc(&tkeys, cap * 4));
        TALLY_CUDA_CHECK(cudaMalloc(&tsum, cap * 8));
        TALLY_CUDA_CHECK(cudaMalloc(&tcount, cap * 8));
        const double global_ms = timer.median_ms(opt.reps, [&] {
          fill_i32<<<fill_grid, 256>>>(tkeys, cap, kEmpty);
          TALLY_CUDA_CHECK(cudaMemsetAsync(tsum, 0, cap * 8));
          TALLY_CUDA_CHECK(cudaMemsetAsync(tcount, 0, cap * 8));
          baseline_global_kernel<<<dev.sm_count * 4, 256>>>(keys, values, n, tkeys, tsum, tcount, cap - 1);
          TALLY_CUDA_CHECK_LAUNCH("baseline_global_kernel");
        });
        bool global_ok = true;
        {
          std::vector<int32_t> hk(cap);
          std::vector<unsigned long long> hs(cap), hc(cap);
          TALLY_CUDA_CHECK(cudaMemcpy(hk.data(), tkeys, cap * 4, cudaMemcpyDeviceToHost));
          TALLY_CUDA_CHECK(cudaMemcpy(hs.data(), tsum, cap * 8, cudaMemcpyDeviceToHost));
          TALLY_CUDA_CHECK(cudaMemcpy(hc.data(), tcount, cap * 8, cudaMemcpyDeviceToHost));
          uint64_t found = 0;
          for (uint64_t s = 0; global_ok && s < cap; ++s) {
            if (hk[s] == kEmpty) continue;
            ++found;
            const uint64_t u = index_of(hk[s], sparse);
            global_ok = u < groups && static_cast<int64_t>(hs[s]) == ref.sum[u] &&
                        static_cast<int64_t>(hc[s]) == ref.count[u];
          }
          global_ok = global_ok && found == ref.present;
        }
        TALLY_CUDA_CHECK(cudaFree(tkeys));
        TALLY_CUDA_CHECK(cudaFree(tsum));
        TALLY_CUDA_CHECK(cudaFree(tcount));

        const double better_baseline = std::min(sort_ms, global_ms);
        const bool ok = tally_ok && sort_ok && global_ok;
        all_ok = all_ok && ok;
        std::string check = ok ? "ok" : "WRONG:";
        if (!tally_ok) check += " tally";
        if (!sort_ok) check += " sort";
        if (!global_ok) check += " global";
        std::printf("2^%-5d %-12s %9.3f %9.1f %6.1f%% %9.3f %9.3f %7.2fx %s\n", lg,
                    std::string(tg::variant_name(best)).c_str(), tally_ms, n / tally_ms / 1e6,
                    100.0 * read_ms / tally_ms, sort_ms, global_ms, better_baseline / tally_ms, check.c_str());
        std::fflush(stdout);
        if (csv) {
          auto line = [&](const char* engine, const std::string& variant, const std::string& cfg, double ms, bool good) {
            std::fprintf(csv, "%s,%d,%s,%s,\"%s\",%.4f,%.4e,%.4f,%s\n", kind.c_str(), lg, engine, variant.c_str(),
                         cfg.c_str(), ms, n / ms * 1e3, read_ms / ms, good ? "ok" : "WRONG");
          };
          line("read", "read", "", read_ms, true);
          line("tally", std::string(tg::variant_name(best)), tg::describe(best_cfg), tally_ms, tally_ok);
          line("baseline", "cub_sort_reduce_by_key", "", sort_ms, sort_ok);
          line("baseline", "global_linear_probing", "sms_x_1024_threads", global_ms, global_ok);
        }

        if (!opt.all_variants)
          std::printf("        as run: %s  grid=%d growths=%d spilled=%llu\n", tg::describe(best_report.used).c_str(),
                      best_report.grid_blocks, best_report.table_growths,
                      static_cast<unsigned long long>(best_report.spilled));
        // The sweep: other configurations of the same variant, same data and
        // aggregator, each checked; the ratio is to the better baseline above.
        for (const std::string& extra : opt.sweep) {
          const tg::VariantConfig c = with_overrides(best_cfg, extra);
          const double ms = run_variant(best, c, agg);
          const bool good = check_tally(agg);
          all_ok = all_ok && good;
          std::printf("        sweep %-22s %9.3f ms %6.1f%% read %7.2fx  %s  as run: %s grid=%d growths=%d spilled=%llu\n",
                      extra.c_str(), ms, 100.0 * read_ms / ms, better_baseline / ms, good ? "ok" : "WRONG",
                      tg::describe(last_report.used).c_str(), last_report.grid_blocks, last_report.table_growths,
                      static_cast<unsigned long long>(last_report.spilled));
          std::fflush(stdout);
          if (csv)
            std::fprintf(csv, "%s,%d,tally_sweep,%s,\"%s\",%.4f,%.4e,%.4f,%s\n", kind.c_str(), lg,
                         std::string(tg::variant_name(best)).c_str(), tg::describe(c).c_str(), ms, n / ms * 1e3,
                         read_ms / ms, good ? "ok" : "WRONG");
        }
        // Every other Tally variant that can run, with its rule-based config.
        if (opt.all_variants) {
          std::string others;
          for (tg::Variant v : tg::kAllVariants) {
            if (v == best || !tg::can_use(v, spec, dev, facts)) continue;
            const tg::VariantConfig c = tg::default_launch_config(v, spec, dev, facts);
            tg::GroupByAggregator a(dev, spec, table_options(v));
            const double ms = run_variant(v, c, a);
            const bool good = check_tally(a);
            all_ok = all_ok && good;
            char buf[96];
            std::snprintf(buf, sizeof buf, " %s=%.3f%s", std::string(tg::variant_name(v)).c_str(), ms,
                          good ? "" : "(WRONG)");
            others += buf;
            if (csv)
              std::fprintf(csv, "%s,%d,tally,%s,\"%s\",%.4f,%.4e,%.4f,%s\n", kind.c_str(), lg,
                           std::string(tg::variant_name(v)).c_str(), tg::describe(c).c_str(), ms, n / ms * 1e3,
                           read_ms / ms, good ? "ok" : "WRONG");
          }
          std::printf("        other variants (ms):%s   read=%.3f ms (%.0f GB/s)  [%s: growths=%d spilled=%llu grid=%d]\n",
                      others.c_str(), read_ms, 8.0 * n / read_ms / 1e6, tg::describe(best_report.used).c_str(),
                      best_report.table_growths, static_cast<unsigned long long>(best_report.spilled),
                      best_report.grid_blocks);
          std::fflush(stdout);
        }
        (void)ideal_rows_per_ms;
      }
    }
    if (csv) std::fclose(csv);
    std::printf("\n%s\n", all_ok ? "all results checked: ok" : "some results wrong");
    return all_ok ? 0 : 1;
  } catch (const tally::Error& e) {
    std::fprintf(stderr, "gpu_group_by_bench: %s\n", e.what());
    return 1;
  }
}
