// What a GROUP BY costs after its engine, in process (no socket): the
// planner side's "result columns" (executor/engine_aggregator.cpp: the
// engine's arrays turned into result columns, printed in EXPLAIN ANALYZE's
// `Planner side:` line) and the DataRow encoding of the result
// (stream_rows into a buffer, text), for
//   SELECT g, sum(v) FROM r GROUP BY g            (sum)
//   SELECT g, count(*), sum(v) FROM r GROUP BY g  (cnt+sum: live_tuning_bench's query)
// over an in-memory int4 table, answered by
//   - cpu:       the CPU engine in its compact form (int64 sums, shared counts);
//   - full-form: the CPU engine asked for the GPU engine's full form (a count
//                per aggregate, 128-bit sums), so the GPU's host-side result
//                path is measured without a GPU.
// Checks: G rows, the sum of the sums equals the table's sum of v (and of the
// counts its rows), and both forms encode byte-identical DataRows.
//
// Usage: result_columns_bench [--rows 262144] [--groups 4096,65536] [--reps 200]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/connect/number_list.hpp"
#include "common/aggregate_engine.hpp"
#include "executor/parser.hpp"
#include "executor/result_set.hpp"
#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"
#include "protocol/discarding_result_writer.hpp"
#include "tests/executor/column_fixture.hpp"
#include "executor/cpu/cpu_engine.hpp"

namespace {

using namespace tally;
using namespace tally::executor;
using Clock = std::chrono::steady_clock;

// The CPU engine, asked for the full form (no compact_result), as the GPU answers.
class FullFormEngine final : public AggregateEngine {
 public:
  std::string name() const override { return "full-form"; }
  bool can_run(const AggregationSpec& spec) const override { return cpu_->can_run(spec); }
  std::unique_ptr<AggregationRun> start(const AggregationSpec& spec) override {
    AggregationSpec full = spec;
    full.compact_result = false;
    return cpu_->start(full);
  }

 private:
  std::unique_ptr<AggregateEngine> cpu_ = make_cpu_engine();
};

// Keeps every DataRow byte (so two runs can be compared) in one buffer.
class KeepingWriter final : public protocol::DiscardingResultWriter {
 public:
  std::string* data_row_buffer() override { return &buffer; }
  std::string buffer;
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

struct Measured {
  std::vector<double> columns_us, encode_us;
  size_t rows = 0;
  int64_t sum = 0, counted = 0;
  std::string bytes;  // the last run's DataRows, sorted by row for the comparison
};

Measured measure(const std::string& sql, MemoryTableProvider& tables, AggregateEngine* gpu, int reps) {
  const auto statements = parse_sql(sql);
  std::vector<uint32_t> types;
  PlanContext pc;
  pc.tables = &tables;
  pc.parameter_types = &types;
  auto plan = plan_select(statements.at(0).body(), pc);
  Measured m;
  for (int i = 0; i < reps + 3; ++i) {
    ExecContext ec;
    ec.gpu_engine = gpu;
    ec.engine = gpu ? "gpu" : "cpu";
    std::vector<std::string> explain;
    ec.explain = &explain;
    ResultSet result = run_select(*plan, ec);
    double columns = -1;
    for (const auto& line : explain) {
      if (const char* at = std::strstr(line.c_str(), "result columns ")) columns = std::atof(at + 15);
    }
    KeepingWriter writer;
    size_t position = 0;
    const auto t0 = Clock::now();
    stream_rows(result, std::vector<tally::Format>(result.columns.size(), tally::Format::text), position, 0,
                writer);
    const double encode = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (i < 3) continue;  // warm-up
    m.columns_us.push_back(columns);
    m.encode_us.push_back(encode);
    m.rows = result.rows;
    m.sum = m.counted = 0;
    const size_t last = result.columns.size() - 1;  // the sum; before it the count, if any
    for (size_t r = 0; r < result.rows; ++r) {
      m.sum += result.columns[last].int_data()[r];
      m.counted += last == 2 ? result.columns[1].int_data()[r] : 1;
    }
    m.bytes = std::move(writer.buffer);
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t rows = uint64_t{1} << 18;
  int reps = 200;
  std::vector<uint64_t> groups = {4096, 65536};
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--rows" && i + 1 < argc) rows = std::strtoull(argv[++i], nullptr, 10);
    else if (flag == "--reps" && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (flag == "--groups" && i + 1 < argc) {
      groups = tally::bench::parse_number_list(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: result_columns_bench [--rows N] [--groups 4096,65536] [--reps R]\n");
      return 2;
    }
  }
  // group_by_round_trip_bench's rows: keys (i * 2654435761) mod G, values (i * 7919) mod 1000 - 500.
  std::vector<TableColumn> columns;
  for (uint64_t g : groups) columns.push_back({"g" + std::to_string(g), {TypeId::int4}});
  columns.push_back({"v", {TypeId::int4}});
  auto table = std::make_shared<MemoryTable>("r", columns);
  constexpr uint64_t kChunkRows = uint64_t{1} << 16;
  int64_t total = 0;
  for (uint64_t at = 0; at < rows; at += kChunkRows) {
    const uint64_t n = std::min(kChunkRows, rows - at);
    auto batch = std::make_shared<storage::ChunkBatch>();
    batch->rows = n;
    const std::vector<uint8_t> valid(n, 1);
    for (uint64_t g : groups) {
      std::vector<int32_t> keys(n);
      for (uint64_t r = 0; r < n; ++r) keys[r] = static_cast<int32_t>(((at + r) * 2654435761ULL) % g);
      batch->columns.push_back(testing::column(TypeId::int4, keys, valid));
    }
    std::vector<int32_t> values(n);
    for (uint64_t r = 0; r < n; ++r) {
      values[r] = static_cast<int32_t>(((at + r) * 7919) % 1000) - 500;
      total += values[r];
    }
    batch->columns.push_back(testing::column(TypeId::int4, values, valid));
    table->append(batch);
  }
  MemoryTableProvider tables;
  tables.put(table);
  FullFormEngine full;

  std::printf("%llu rows, SELECT g[, count(*)], sum(v) FROM r GROUP BY g; medians of %d runs (p90)\n",
              static_cast<unsigned long long>(rows), reps);
  std::printf("%-8s %-8s %-9s | %16s %16s | %s\n", "G", "query", "engine", "result_cols_us", "encode_us", "check");
  bool all_ok = true;
  for (uint64_t g : groups) {
    for (const std::string shape : {"sum", "cnt+sum"}) {
      const std::string col = "g" + std::to_string(g);
      const std::string sql = "SELECT " + col + (shape == "sum" ? "" : ", count(*)") + ", sum(v) FROM r GROUP BY " + col;
      const Measured cpu = measure(sql, tables, nullptr, reps);
      const Measured gpu_shaped = measure(sql, tables, &full, reps);
      for (const auto* m : {&cpu, &gpu_shaped}) {
        std::string check = "ok";
        if (m->rows != std::min(g, rows)) check = "FAIL: " + std::to_string(m->rows) + " rows";
        else if (m->sum != total) check = "FAIL: sums do not add up to the table's";
        else if (shape != "sum" && static_cast<uint64_t>(m->counted) != rows) check = "FAIL: counts do not add up";
        else if (m->bytes != cpu.bytes) check = "FAIL: DataRows differ from the compact form's";
        all_ok &= check == "ok";
        std::printf("%-8llu %-8s %-9s | %7.1f (%6.1f) %7.1f (%6.1f) | %s\n", static_cast<unsigned long long>(g),
                    shape.c_str(), m == &cpu ? "cpu" : "full-form", quantile(m->columns_us, 0.5),
                    quantile(m->columns_us, 0.9), quantile(m->encode_us, 0.5), quantile(m->encode_us, 0.9),
                    check.c_str());
      }
    }
  }
  std::printf("result_cols_us: EXPLAIN ANALYZE's `result columns` (engine arrays to result columns);\n"
              "encode_us: stream_rows of the result, text, into a buffer (no socket).\n");
  return all_ok ? 0 : 1;
}
