// In-process CPU engine benchmark (no SQL, no wire): the aggregation engine
// alone on N rows of (int4 key, int4 value) in 1 M-row chunks (the storage
// default), G = 1 .. 8M groups, for `sum(v)` and the five-aggregate query
// (count(*), sum, min, max, and avg's sum), with the key range known from
// statistics as the planner gives it. Every group's states are checked against
// a direct-indexed reference computed in the same run; the reference's time
// (one thread, plain arrays) is printed as the baseline.
//
// Usage: cpu_engine_bench [--rows N] [--threads T] [--variant dense|hash|dense-radix|hash-radix] [--runs R]
//                         [--groups G]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "executor/cpu/cpu_engine.hpp"

using namespace tally;
using namespace tally::executor;

namespace {

constexpr size_t kChunkRows = size_t{1} << 20;  // storage's default chunk size

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t rows = 10'000'000;
  int threads = 0, runs = 2;
  std::string variant;
  uint64_t only_groups = 0;  // 0 = every G
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rows") rows = std::stoull(argv[i + 1]);
    else if (flag == "--threads") threads = std::stoi(argv[i + 1]);
    else if (flag == "--variant") variant = argv[i + 1];
    else if (flag == "--runs") runs = std::stoi(argv[i + 1]);
    else if (flag == "--groups") only_groups = std::stoull(argv[i + 1]);
  }
  const std::vector<uint64_t> group_counts = {1, 16, 1024, 65536, 1048576, 8388608};
  std::vector<int32_t> values(rows), keys(rows);
  for (size_t i = 0; i < rows; ++i) values[i] = static_cast<int32_t>((i * 7919) % 1000) - 500;
  std::printf("%-9s %-6s %10s %12s %10s %12s %7s %s\n", "G", "query", "engine_s", "engine_Mr/s", "ref_s", "ref_Mr/s",
              "ratio", "check");
  bool all_ok = true;
  for (uint64_t g : group_counts) {
    if (only_groups != 0 && g != only_groups) continue;
    for (size_t i = 0; i < rows; ++i) keys[i] = static_cast<int32_t>((i * 2654435761ULL) % g);
    const uint64_t groups = std::min<uint64_t>(g, rows);
    // Reference: one thread, direct-indexed arrays.
    const auto ref_start = std::chrono::steady_clock::now();
    std::vector<int64_t> ref_count(g, 0), ref_sum(g, 0), ref_min(g, INT64_MAX), ref_max(g, INT64_MIN);
    for (size_t i = 0; i < rows; ++i) {
      const int32_t k = keys[i];
      const int64_t v = values[i];
      ++ref_count[k];
      ref_sum[k] += v;
      ref_min[k] = std::min(ref_min[k], v);
      ref_max[k] = std::max(ref_max[k], v);
    }
    const double ref_s = seconds_since(ref_start);
    for (int five = 0; five < 2; ++five) {
      AggregationSpec spec;
      spec.key_width = ColumnWidth::int32;
      spec.key_range_known = true;
      spec.key_min = 0;
      spec.key_max = static_cast<int64_t>(groups) - 1;
      spec.estimated_groups = groups;
      spec.threads = threads;
      spec.forced_variant = variant;
      spec.value_widths = {ColumnWidth::int32};
      if (five) {
        spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}, {PartialOp::min_int, 0, -1},
                           {PartialOp::max_int, 0, -1},     {PartialOp::sum_int, 0, -1}};
      } else {
        spec.aggregates = {{PartialOp::sum_int, 0, -1}};
      }
      double best = 1e30;
      std::string variant_used;
      bool ok = true;
      for (int run = 0; run < runs; ++run) {
        auto engine = make_cpu_engine();
        const auto start = std::chrono::steady_clock::now();
        auto agg = engine->start(spec);
        for (int pass = 0; pass < agg->passes(); ++pass) {
          agg->begin_pass(pass);
          for (size_t begin = 0; begin < rows; begin += kChunkRows) {
            ChunkInput in;
            in.rows = std::min(kChunkRows, rows - begin);
            in.keys = ColumnView{ColumnWidth::int32, keys.data() + begin, nullptr};
            in.values = {ColumnView{ColumnWidth::int32, values.data() + begin, nullptr}};
            in.filters.assign(spec.aggregates.size(), nullptr);
            agg->sink(in);
          }
        }
        AggregationResult result = agg->finalize();
        best = std::min(best, seconds_since(start));
        if (run == 0) {
          const AggregationReport report = agg->report();
          char phases[64];
          std::snprintf(phases, sizeof phases, "sink %.0f ms, finalize %.0f ms; ", report.sink_ms, report.finalize_ms);
          variant_used = phases + report.variant + " " + report.configuration;
        }
        // Check every group against the reference.
        ok &= result.groups() == groups;
        for (size_t i = 0; ok && i < result.groups(); ++i) {
          const int64_t k = result.keys[i];
          ok &= result.key_valid[i] && k >= 0 && static_cast<uint64_t>(k) < g;
          if (!ok) break;
          if (five) {
            ok &= result.states[0].count[i] == ref_count[k] && result.states[1].sum_int[i] == ref_sum[k] &&
                  result.states[1].count[i] == ref_count[k] && result.states[2].extreme_int[i] == ref_min[k] &&
                  result.states[3].extreme_int[i] == ref_max[k] && result.states[4].sum_int[i] == ref_sum[k];
          } else {
            ok &= result.states[0].sum_int[i] == ref_sum[k] && result.states[0].count[i] == ref_count[k];
          }
        }
      }
      all_ok &= ok;
      std::printf("%-9llu %-6s %10.3f %12.1f %10.3f %12.1f %6.2fx %s  %s\n", static_cast<unsigned long long>(g),
                  five ? "5aggs" : "sum", best, static_cast<double>(rows) / best / 1e6, ref_s,
                  static_cast<double>(rows) / ref_s / 1e6, ref_s / best, ok ? "ok" : "MISMATCH", variant_used.c_str());
      std::fflush(stdout);
    }
  }
  std::printf("\n%s\n", all_ok ? "all groups match the reference" : "SOME GROUPS DIFFER");
  return all_ok ? 0 : 1;
}
