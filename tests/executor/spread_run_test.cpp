// Aggregations spread over several runs (common/spread_run.hpp: how the GPU
// engine uses every device of the host, gpu/engine/multi_device_engine.hpp),
// with three CPU engine runs standing in for three GPUs: every answer must be
// what one run over the whole input gives. Counts, integer sums and avg,
// min/max of integers and floats, integer and float variance, corr (the
// float moments' combine), NULL keys, groups present in only some parts, a
// global aggregate, and an input with no rows. No GPU needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "common/partial_states_merge.hpp"
#include "common/spread_run.hpp"
#include "executor/cpu/cpu_engine.hpp"
#include "tests/executor/column_fixture.hpp"
#include "tests/executor/select_runner.hpp"

namespace tally::executor {
namespace {

class SpreadEngine final : public AggregateEngine {
 public:
  std::string name() const override { return "spread"; }
  bool can_run(const AggregationSpec& spec) const override { return cpu_->can_run(spec); }
  std::unique_ptr<AggregationRun> start(const AggregationSpec& spec) override {
    if (!mergeable(spec)) return cpu_->start(spec);
    AggregationSpec each = spec;
    each.compact_result = false;
    std::vector<std::unique_ptr<AggregationRun>> runs;
    for (int i = 0; i < 3; ++i) runs.push_back(cpu_->start(each));
    ++spread_runs;
    entered.assign(3, 0);
    return std::make_unique<SpreadRun>(spec, std::move(runs), std::vector<std::string>{"a", "b", "c"},
                                       [this](size_t i) { ++entered[i]; });
  }
  int spread_runs = 0;
  std::vector<int> entered;  // calls into each run of the last spread query

 private:
  std::unique_ptr<AggregateEngine> cpu_ = make_cpu_engine();
};

using testing::column;

std::shared_ptr<MemoryTableProvider> make_tables() {
  auto table = std::make_shared<MemoryTable>(
      "t", std::vector<TableColumn>{{"g", {TypeId::int4}}, {"v", {TypeId::int4}}, {"b", {TypeId::int8}},
                                    {"x", {TypeId::float8}}, {"y", {TypeId::float8}}});
  std::mt19937_64 rng(5);
  for (int chunk = 0; chunk < 7; ++chunk) {
    std::vector<int32_t> g, v;
    std::vector<int64_t> b;
    std::vector<double> x, y;
    std::vector<uint8_t> g_valid, v_valid, x_valid, all;
    for (int r = 0; r < 3000; ++r) {
      // Keys 1000 + chunk occur in one chunk only: a group only one run sees.
      const int32_t key = rng() % 10 == 0 ? 1000 + chunk : static_cast<int32_t>(rng() % 200);
      const bool null_key = rng() % 40 == 0;
      g.push_back(null_key ? 0 : key);
      g_valid.push_back(null_key ? 0 : 1);
      v.push_back(static_cast<int32_t>(rng() % 20001) - 10000);
      v_valid.push_back(key == 3 || rng() % 7 == 0 ? 0 : 1);  // group 3: every v NULL
      b.push_back(static_cast<int64_t>(rng() >> 2));
      // Quarters: float sums are exact in any order, so they compare as text.
      x.push_back(static_cast<double>(static_cast<int>(rng() % 4001) - 2000) / 4);
      y.push_back(x.back() * 0.5 + static_cast<double>(rng() % 100));
      x_valid.push_back(rng() % 9 == 0 ? 0 : 1);
      all.push_back(1);
    }
    auto batch = std::make_shared<storage::ChunkBatch>();
    batch->rows = g.size();
    batch->columns.push_back(column(TypeId::int4, g, g_valid));
    batch->columns.push_back(column(TypeId::int4, v, v_valid));
    batch->columns.push_back(column(TypeId::int8, b, all));
    batch->columns.push_back(column(TypeId::float8, x, x_valid));
    batch->columns.push_back(column(TypeId::float8, y, all));
    table->append(batch);
  }
  auto tables = std::make_shared<MemoryTableProvider>();
  tables->put(table);
  tables->put(std::make_shared<MemoryTable>("e", std::vector<TableColumn>{{"g", {TypeId::int4}}, {"v", {TypeId::int4}}}, 16385));
  return tables;
}

std::vector<std::string> run(const std::string& sql, MemoryTableProvider& tables, AggregateEngine* engine) {
  ExecContext ec;
  ec.threads = 2;
  ec.gpu_engine = engine;
  ec.engine = engine ? "gpu" : "cpu";
  return testing::sorted_text_lines(testing::run_select_sql(sql, tables, ec));
}

// Equal lines, fields compared as numbers within 1e-12 relative where both
// parse as one (variance and corr: a different combine order rounds differently).
void expect_same(const std::vector<std::string>& got, const std::vector<std::string>& want, const std::string& sql) {
  ASSERT_EQ(got.size(), want.size()) << sql;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    std::istringstream a(got[i]), b(want[i]);
    std::string fa, fb;
    while (std::getline(a, fa, '|') && std::getline(b, fb, '|')) {
      if (fa == fb) continue;
      char* ea = nullptr;
      char* eb = nullptr;
      const double da = std::strtod(fa.c_str(), &ea), db = std::strtod(fb.c_str(), &eb);
      ASSERT_TRUE(*ea == '\0' && *eb == '\0') << sql << ": " << got[i] << " vs " << want[i];
      EXPECT_LE(std::fabs(da - db), 1e-12 * std::max(std::fabs(da), std::fabs(db))) << sql << ": " << got[i] << " vs " << want[i];
    }
  }
}

TEST(SpreadRun, MergedAnswersEqualOneRunOverAllChunks) {
  auto tables = make_tables();
  SpreadEngine spread;
  const std::vector<std::string> queries = {
      "SELECT g, count(*), count(v), sum(v), avg(v), sum(b), min(v), max(v), min(b) FROM t GROUP BY g",
      "SELECT g, sum(x), min(x), max(x), avg(x), count(x) FROM t GROUP BY g",
      "SELECT g, var_samp(v), stddev_pop(v), variance(x), stddev(x) FROM t GROUP BY g",
      "SELECT g, corr(y, x), covar_pop(y, x), regr_slope(y, x) FROM t GROUP BY g",
      "SELECT count(*), sum(v), avg(x), max(b), stddev(x) FROM t",
      "SELECT g, count(*), sum(v) FROM e GROUP BY g",
      "SELECT count(*), sum(v) FROM e",
  };
  for (const auto& q : queries) {
    const int before = spread.spread_runs;
    const auto want = run(q, *tables, nullptr);
    const auto got = run(q, *tables, &spread);
    EXPECT_EQ(spread.spread_runs, before + 1) << q << ": not spread";
    expect_same(got, want, q);
    if (q.find(" FROM t") != std::string::npos) {
      EXPECT_FALSE(got.empty()) << q;
      // Seven chunks over three runs: each run got some.
      for (size_t i = 0; i < spread.entered.size(); ++i) EXPECT_GE(spread.entered[i], 2) << q << ": run " << i;
    }
  }
}

// Groups seen by only one part, and the NULL key's group, merge once each.
TEST(SpreadRun, MergeResultsJoinsEqualKeysAndTheNullKey) {
  AggregationSpec spec;
  spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::max_int, 0, -1}};
  auto part = [](std::vector<int64_t> keys, std::vector<uint8_t> valid, std::vector<int64_t> counts,
                 std::vector<int64_t> maxima) {
    AggregationResult r;
    r.keys = std::move(keys);
    r.key_valid = std::move(valid);
    r.states.resize(2);
    r.states[0].count = counts;
    r.states[1].count = counts;
    r.states[1].extreme_int = std::move(maxima);
    return r;
  };
  std::vector<AggregationResult> parts;
  parts.push_back(part({5, 0, 7}, {1, 0, 1}, {2, 1, 4}, {50, 9, 70}));
  parts.push_back(part({7, 8, 0}, {1, 1, 0}, {1, 3, 2}, {71, 80, 3}));
  const AggregationResult merged = merge_results(spec, std::move(parts));
  ASSERT_EQ(merged.groups(), 4u);
  std::map<std::string, std::pair<int64_t, int64_t>> by_key;
  for (size_t g = 0; g < merged.groups(); ++g) {
    const std::string key = merged.key_valid[g] ? std::to_string(merged.keys[g]) : "NULL";
    by_key[key] = {merged.states[0].count[g], merged.states[1].extreme_int[g]};
  }
  EXPECT_EQ(by_key["5"], std::make_pair(int64_t{2}, int64_t{50}));
  EXPECT_EQ(by_key["7"], std::make_pair(int64_t{5}, int64_t{71}));
  EXPECT_EQ(by_key["8"], std::make_pair(int64_t{3}, int64_t{80}));
  EXPECT_EQ(by_key["NULL"], std::make_pair(int64_t{3}, int64_t{9}));
}

TEST(SpreadRun, OrderedValuesAndKeyTuplesDoNotMerge) {
  AggregationSpec spec;
  spec.aggregates = {{PartialOp::sum_int, 0, -1}};
  EXPECT_TRUE(mergeable(spec));
  spec.key_tuple = true;
  EXPECT_FALSE(mergeable(spec));
  spec.key_tuple = false;
  spec.aggregates.push_back({PartialOp::ordered_values, 0, -1});
  EXPECT_FALSE(mergeable(spec));
  spec.aggregates.back().op = PartialOp::count_distinct;
  EXPECT_FALSE(mergeable(spec));
}

}  // namespace
}  // namespace tally::executor
