// The planner side of the engine seam (executor/engine_aggregator.cpp) over
// an engine that answers in the full partial-state form, as the GPU engine
// does (its own count per aggregate, 128-bit sums): counts and sums/avgs of
// int2/int4 take the compact form's finalization there (the arrays become
// the columns). The answers must be the CPU engine's, row for row, with NULL
// keys, an input whose every value in one group is NULL (its sum and avg are
// NULL), int8 sums (numeric, not narrowed), a global aggregate over no rows,
// streamed avg (stream_to_client), an empty table; and the planner's word on NULL keys
// (AggregationSpec::key_has_nulls). No GPU needed: the "GPU" here is the
// CPU engine asked for the full form.
// (An executor test; it lives here because tests/executor belongs to another
// layer's owner.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <random>

#include "common/aggregate_engine.hpp"
#include "executor/parser.hpp"
#include "executor/result_set.hpp"
#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"
#include "tests/executor/column_fixture.hpp"
#include "tests/executor/recording_writer.hpp"
#include "tests/executor/select_runner.hpp"
#include "executor/cpu/cpu_engine.hpp"

namespace tally::executor {
namespace {

// The CPU engine, asked for the full form (no compact_result).
class FullFormEngine final : public AggregateEngine {
 public:
  std::string name() const override { return "full-form"; }
  bool can_run(const AggregationSpec& spec) const override { return cpu_->can_run(spec); }
  std::unique_ptr<AggregationRun> start(const AggregationSpec& spec) override {
    AggregationSpec full = spec;
    full.compact_result = false;
    ++runs;
    key_has_nulls = spec.key_has_nulls;
    return cpu_->start(full);
  }
  int runs = 0;
  std::optional<bool> key_has_nulls;  // what the planner said of the last query's key

 private:
  std::unique_ptr<AggregateEngine> cpu_ = make_cpu_engine();
};

using testing::column;

std::shared_ptr<MemoryTableProvider> make_tables() {
  auto table = std::make_shared<MemoryTable>(
      "t", std::vector<TableColumn>{{"g", {TypeId::int4}}, {"v", {TypeId::int4}}, {"w", {TypeId::int2}}, {"b", {TypeId::int8}}});
  std::mt19937_64 rng(11);
  for (int chunk = 0; chunk < 2; ++chunk) {
    std::vector<int32_t> g, v;
    std::vector<int16_t> w;
    std::vector<int64_t> b;
    std::vector<uint8_t> g_valid, v_valid, all_valid;
    for (int r = 0; r < 5000; ++r) {
      const bool null_key = rng() % 50 == 0;
      const int32_t key = static_cast<int32_t>(rng() % 300) - 20;
      g.push_back(null_key ? 0 : key);
      g_valid.push_back(null_key ? 0 : 1);
      const uint64_t pick = rng() % 1000;
      v.push_back(pick == 0 ? INT32_MAX : pick == 1 ? INT32_MIN : static_cast<int32_t>(rng() % 2001) - 1000);
      v_valid.push_back(key == 7 || rng() % 6 == 0 ? 0 : 1);  // group 7: every v NULL
      w.push_back(static_cast<int16_t>(static_cast<int>(rng() % 601) - 300));
      b.push_back(static_cast<int64_t>(rng()) / 3);
      all_valid.push_back(1);
    }
    auto batch = std::make_shared<storage::ChunkBatch>();
    batch->rows = g.size();
    batch->columns.push_back(column(TypeId::int4, g, g_valid));
    batch->columns.push_back(column(TypeId::int4, v, v_valid));
    batch->columns.push_back(column(TypeId::int2, w, all_valid));
    batch->columns.push_back(column(TypeId::int8, b, all_valid));
    table->append(batch);
  }
  auto tables = std::make_shared<MemoryTableProvider>();
  tables->put(table);
  // And a table with no rows: a GROUP BY over it is empty, a global aggregate one row.
  tables->put(std::make_shared<MemoryTable>("e", std::vector<TableColumn>{{"g", {TypeId::int4}}, {"v", {TypeId::int4}}}, 16385));
  return tables;
}

// The query's rows as sorted "a|b|NULL" lines, run with `engine`.
std::vector<std::string> run(const std::string& sql, MemoryTableProvider& tables, AggregateEngine* gpu, bool streamed) {
  ExecContext ec;
  ec.threads = 2;
  ec.gpu_engine = gpu;
  ec.engine = gpu ? "gpu" : "cpu";
  ec.stream_to_client = streamed;
  return testing::sorted_text_lines(testing::run_select_sql(sql, tables, ec));
}

TEST(EngineFullForm, CountsSumsAndAvgsOfTheFullFormEqualTheCpuEngines) {
  auto tables = make_tables();
  FullFormEngine full;
  const std::vector<std::string> queries = {
      "SELECT g, count(*), count(v), sum(v), avg(v), sum(w), avg(w), sum(b), min(v), max(w) FROM t GROUP BY g",
      "SELECT g, sum(w) FROM t GROUP BY g",
      "SELECT sum(v), count(*), avg(w) FROM t",
      "SELECT count(*), sum(v), avg(v) FROM t WHERE g > 100000",
      // w has no NULL (chunk statistics say so): its sums skip the scan for
      // empty groups, but for a global aggregate over no row (NULL, NULL, 0).
      "SELECT g, sum(w), avg(w), count(w) FROM t GROUP BY g",
      "SELECT sum(w), avg(w), count(w) FROM t WHERE g > 100000",
  };
  for (const auto& q : queries) {
    for (bool streamed : {false, true}) {
      const int before = full.runs;
      const auto expected = run(q, *tables, nullptr, streamed);
      const auto got = run(q, *tables, &full, streamed);
      EXPECT_EQ(full.runs, before + 1) << q << ": the full-form engine did not run";
      EXPECT_EQ(got, expected) << q << (streamed ? " (streamed)" : "");
      EXPECT_FALSE(got.empty()) << q;
    }
  }
  // The planner tells the engine, from the chunks' statistics, whether the
  // key holds NULLs (the GPU's rules configure for the kernel that runs).
  run("SELECT g, sum(v) FROM t GROUP BY g", *tables, &full, false);
  EXPECT_EQ(full.key_has_nulls, std::optional<bool>(true));
  run("SELECT w, sum(v) FROM t GROUP BY w", *tables, &full, false);
  EXPECT_EQ(full.key_has_nulls, std::optional<bool>(false));
  // No input: no group, or the global aggregate's one row (the CPU engine's
  // compact answer to an empty table once crashed tallyd here).
  for (AggregateEngine* engine : {static_cast<AggregateEngine*>(nullptr), static_cast<AggregateEngine*>(&full)}) {
    EXPECT_EQ(run("SELECT g, count(*), sum(v), avg(v), min(v) FROM e GROUP BY g", *tables, engine, true),
              std::vector<std::string>{});
    EXPECT_EQ(run("SELECT count(*), sum(v), avg(v) FROM e", *tables, engine, true),
              std::vector<std::string>{"0|NULL|NULL"});
    EXPECT_EQ(run("SELECT sum(w), avg(w), count(w) FROM t WHERE g > 100000", *tables, engine, true),
              std::vector<std::string>{"NULL|NULL|0"});
  }
  // Group 7's sum(v) and avg(v) are NULL in both.
  const auto rows = run("SELECT g, sum(v), avg(v) FROM t GROUP BY g", *tables, &full, true);
  EXPECT_NE(std::find(rows.begin(), rows.end(), "7|NULL|NULL"), rows.end());
}

// A streamed result keeps its engine run alive (ResultSet::retained) so that
// the run is released after the reply (ResultWriter::release_after_reply),
// not before the first DataRow; a result that is not streamed (EXPLAIN,
// cursors) releases it inside run_select, as before.
class CountingEngine final : public AggregateEngine {
 public:
  class Run final : public AggregationRun {
   public:
    Run(std::unique_ptr<AggregationRun> inner, int& released) : inner_(std::move(inner)), released_(released) {}
    ~Run() override { ++released_; }
    int passes() const override { return inner_->passes(); }
    void begin_pass(int pass) override { inner_->begin_pass(pass); }
    void sink(const ChunkInput& chunk) override { inner_->sink(chunk); }
    AggregationResult finalize() override { return inner_->finalize(); }
    AggregationReport report() const override { return inner_->report(); }

   private:
    std::unique_ptr<AggregationRun> inner_;
    int& released_;
  };
  std::string name() const override { return "counting"; }
  bool can_run(const AggregationSpec& spec) const override { return cpu_->can_run(spec); }
  std::unique_ptr<AggregationRun> start(const AggregationSpec& spec) override {
    return std::make_unique<Run>(cpu_->start(spec), released);
  }
  int released = 0;

 private:
  std::unique_ptr<AggregateEngine> cpu_ = make_cpu_engine();
};

TEST(EngineFullForm, StreamedResultKeepsTheRunUntilReleased) {
  auto tables = make_tables();
  CountingEngine engine;
  for (bool streamed : {false, true}) {
    ExecContext ec;
    ec.gpu_engine = &engine;
    ec.engine = "gpu";
    ec.stream_to_client = streamed;
    const int before = engine.released;
    ResultSet result = testing::run_select_sql("SELECT g, sum(v) FROM t GROUP BY g", *tables, ec);
    EXPECT_EQ(engine.released, before + (streamed ? 0 : 1)) << (streamed ? "streamed" : "not streamed");
    EXPECT_EQ(result.retained != nullptr, streamed);
    // The columns do not depend on the run: they stream the same after it is gone.
    const auto lines = testing::sorted_text_lines(result);
    result.retained.reset();
    EXPECT_EQ(engine.released, before + 1);
    EXPECT_EQ(testing::sorted_text_lines(result), lines);
  }
}

}  // namespace
}  // namespace tally::executor
