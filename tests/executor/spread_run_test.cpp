// Aggregations spread over several runs (common/spread_run.hpp: how the GPU
// engine uses every device of the host, gpu/engine/multi_device_engine.hpp),
// with three CPU engine runs standing in for three GPUs: every answer must be
// what one run over the whole input gives. Counts, integer sums and avg,
// min/max of integers and floats, integer and float variance, corr (the
// float moments' combine), NULL keys, groups present in only some parts, a
// global aggregate, and an input with no rows; and merge_results on threads
// (key partitions on the executor's pool) against a one-map reference over
// every partial-state kind, NULL keys, one to four parts and empty parts:
// the same groups in the same order with the same bits. No GPU needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>
#include <memory>
#include <random>
#include <sstream>
#include <type_traits>

#include "common/partial_states_merge.hpp"
#include "common/spread_run.hpp"
#include "executor/cpu/cpu_engine.hpp"
#include "executor/cpu/parallel.hpp"
#include "tests/executor/column_fixture.hpp"
#include "tests/executor/select_runner.hpp"

namespace tally::executor {
namespace {

// The executor's worker pool as SpreadRun's merge threads (as Database gives the GPU engine).
ParallelTasks pool_tasks() {
  return [](int threads, size_t tasks, const std::function<void(size_t)>& run) {
    cpu::parallel_tasks(threads > 0 ? threads : 4, tasks, [&](int, size_t task) { run(task); });
  };
}

class SpreadEngine final : public AggregateEngine {
 public:
  explicit SpreadEngine(ParallelTasks parallel = {}) : parallel_(std::move(parallel)) {}
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
                                       [this](size_t i) { ++entered[i]; }, parallel_);
  }
  int spread_runs = 0;
  std::vector<int> entered;  // calls into each run of the last spread query

 private:
  ParallelTasks parallel_;
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
  // Many groups (past the merge's one-thread bound), most in several chunks,
  // some NULL keys.
  auto many = std::make_shared<MemoryTable>(
      "m", std::vector<TableColumn>{{"g", {TypeId::int8}}, {"v", {TypeId::int4}}, {"x", {TypeId::float8}}});
  for (int chunk = 0; chunk < 5; ++chunk) {
    std::vector<int64_t> g;
    std::vector<int32_t> v;
    std::vector<double> x;
    std::vector<uint8_t> g_valid, all;
    for (int r = 0; r < 40000; ++r) {
      const bool null_key = rng() % 1000 == 0;
      g.push_back(null_key ? 0 : static_cast<int64_t>(rng() % 90000) * 7919 - 300000000);
      g_valid.push_back(null_key ? 0 : 1);
      v.push_back(static_cast<int32_t>(rng() % 2001) - 1000);
      x.push_back(static_cast<double>(static_cast<int>(rng() % 4001) - 2000) / 4);
      all.push_back(1);
    }
    auto batch = std::make_shared<storage::ChunkBatch>();
    batch->rows = g.size();
    batch->columns.push_back(column(TypeId::int8, g, g_valid));
    batch->columns.push_back(column(TypeId::int4, v, all));
    batch->columns.push_back(column(TypeId::float8, x, all));
    many->append(batch);
  }
  tables->put(many);
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

// Runs `sql` spread (it must be spread: once) and on the CPU engine alone,
// expects the same lines, and returns the spread run's.
std::vector<std::string> expect_spread_as_one(SpreadEngine& spread, MemoryTableProvider& tables, const std::string& sql) {
  const int before = spread.spread_runs;
  const auto want = run(sql, tables, nullptr);
  const auto got = run(sql, tables, &spread);
  EXPECT_EQ(spread.spread_runs, before + 1) << sql << ": not spread";
  expect_same(got, want, sql);
  return got;
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
    const auto got = expect_spread_as_one(spread, *tables, q);
    if (q.find(" FROM t") != std::string::npos) {
      EXPECT_FALSE(got.empty()) << q;
      // Seven chunks over three runs: each run got some.
      for (size_t i = 0; i < spread.entered.size(); ++i) EXPECT_GE(spread.entered[i], 2) << q << ": run " << i;
    }
  }
}

// The same through merge threads, with enough groups that the merge runs
// partitioned.
TEST(SpreadRun, ManyGroupsMergedOnThreads) {
  auto tables = make_tables();
  SpreadEngine spread(pool_tasks());
  const std::vector<std::string> queries = {
      "SELECT g, count(*), sum(v), min(v), max(x), avg(x), stddev(x) FROM m GROUP BY g",
      "SELECT g, count(*), count(v), sum(v), avg(v), sum(b), min(v), max(v), min(b) FROM t GROUP BY g",
      "SELECT g, corr(y, x), covar_pop(y, x), regr_slope(y, x) FROM t GROUP BY g",
  };
  for (const auto& q : queries) expect_spread_as_one(spread, *tables, q);
  EXPECT_GT(run("SELECT g, count(*) FROM m GROUP BY g", *tables, nullptr).size(), size_t{60000});
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

// Partial states of every kind merge_results combines.
const std::vector<PartialOp> kMergedOps = {
    PartialOp::count_rows, PartialOp::count_valid, PartialOp::sum_int,     PartialOp::sum_float,
    PartialOp::min_int,    PartialOp::max_int,     PartialOp::min_float,   PartialOp::max_float,
    PartialOp::moments_int, PartialOp::moments_float, PartialOp::moments2_float};

AggregationSpec every_kind_spec() {
  AggregationSpec spec;
  for (const PartialOp op : kMergedOps) spec.aggregates.push_back({op, 0, op == PartialOp::moments2_float ? 1 : -1});
  return spec;
}

// One run's result: `groups` distinct keys out of [0, universe) (scaled so
// that keys are not small), the NULL key's group at a random place when
// `with_null`, and random states (counts of 0 included: a min/max group that
// saw no value; float extremes that are NaN).
// `twice`: some keys, and the NULL key, held by two groups of the part (no
// run returns that, but the merge must not race on it).
AggregationResult random_part(const AggregationSpec& spec, std::mt19937_64& rng, size_t groups, int64_t universe,
                              bool with_null, bool empty_key_valid, bool twice = false) {
  AggregationResult r;
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < universe; ++k) keys.push_back(k * 1000003 - 7);
  std::shuffle(keys.begin(), keys.end(), rng);
  keys.resize(std::min<size_t>(groups, keys.size()));
  if (twice) {
    for (size_t g = 1; g < keys.size(); g += 7) keys[g] = keys[rng() % g];
  }
  r.keys = keys;
  if (!empty_key_valid || with_null) r.key_valid.assign(r.keys.size(), 1);
  for (int n = 0; n < (with_null ? twice ? 2 : 1 : 0); ++n) {
    const size_t at = r.keys.empty() ? 0 : rng() % (r.keys.size() + 1);
    r.keys.insert(r.keys.begin() + static_cast<long>(at), 0);
    r.key_valid.insert(r.key_valid.begin() + static_cast<long>(at), 0);
  }
  const size_t n = r.keys.size();
  const auto real = [&] {
    if (rng() % 50 == 0) return std::numeric_limits<double>::quiet_NaN();
    return static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 7;
  };
  r.states.resize(spec.aggregates.size());
  for (size_t a = 0; a < spec.aggregates.size(); ++a) {
    PartialStates& st = r.states[a];
    visit_fields(spec.aggregates[a].op, [&](auto member) {
      auto& v = st.*member;
      v.resize(n);
      for (size_t g = 0; g < n; ++g) {
        using T = std::decay_t<decltype(v[g])>;
        if constexpr (std::is_same_v<T, double>) v[g] = real();
        else if constexpr (std::is_same_v<T, __int128>) v[g] = static_cast<__int128>(static_cast<int64_t>(rng())) * 3;
        else v[g] = static_cast<int64_t>(rng() % 1000) - (member == &PartialStates::count ? 0 : 500);
      }
    });
    if (!st.count.empty()) {
      for (size_t g = 0; g < n; ++g)
        if (rng() % 10 == 0) st.count[g] = 0;
    }
    if (!st.n.empty()) {
      for (size_t g = 0; g < n; ++g) st.n[g] = static_cast<double>(rng() % 100);
    }
  }
  return r;
}

// The merge's promise by a map from key to group: the largest part (the
// first of equals) as it is, then each other part's groups in order, new
// keys appended, known ones combined into their group.
AggregationResult reference_merge(const AggregationSpec& spec, std::vector<AggregationResult> parts) {
  auto largest = std::max_element(parts.begin(), parts.end(), [](const AggregationResult& a, const AggregationResult& b) {
    return a.groups() < b.groups();
  });
  std::iter_swap(parts.begin(), largest);
  AggregationResult out = std::move(parts.front());
  out.key_valid.resize(out.keys.size(), 1);
  std::unordered_map<int64_t, size_t> index;
  size_t null_group = SIZE_MAX;
  for (size_t g = 0; g < out.groups(); ++g) {
    if (out.key_valid[g]) index.emplace(out.keys[g], g);
    else null_group = g;
  }
  for (size_t p = 1; p < parts.size(); ++p) {
    const AggregationResult& part = parts[p];
    for (size_t g = 0; g < part.groups(); ++g) {
      const bool valid = g >= part.key_valid.size() || part.key_valid[g] != 0;
      size_t& to = valid ? index.try_emplace(part.keys[g], SIZE_MAX).first->second : null_group;
      if (to != SIZE_MAX) {
        for (size_t a = 0; a < spec.aggregates.size(); ++a)
          combine_group(spec.aggregates[a].op, out.states[a], to, part.states[a], g);
        continue;
      }
      to = out.groups();
      out.keys.push_back(part.keys[g]);
      out.key_valid.push_back(valid ? 1 : 0);
      for (size_t a = 0; a < spec.aggregates.size(); ++a) {
        visit_fields(spec.aggregates[a].op, [&](auto member) {
          (out.states[a].*member).push_back((part.states[a].*member)[g]);
        });
      }
    }
  }
  return out;
}

// Same groups in the same order, every state array equal bit for bit.
void expect_identical(const AggregationSpec& spec, const AggregationResult& got, const AggregationResult& want,
                      const std::string& what) {
  ASSERT_EQ(got.keys, want.keys) << what;
  std::vector<uint8_t> got_valid = got.key_valid, want_valid = want.key_valid;
  got_valid.resize(got.keys.size(), 1);
  want_valid.resize(want.keys.size(), 1);
  EXPECT_EQ(got_valid, want_valid) << what;
  ASSERT_EQ(got.states.size(), want.states.size()) << what;
  for (size_t a = 0; a < spec.aggregates.size(); ++a) {
    visit_fields(spec.aggregates[a].op, [&](auto member) {
      const auto& x = got.states[a].*member;
      const auto& y = want.states[a].*member;
      ASSERT_EQ(x.size(), y.size()) << what << ", aggregate " << a;
      EXPECT_TRUE(x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(x[0])) == 0)
          << what << ", aggregate " << a;
    });
  }
}

TEST(SpreadRun, MergeOnThreadsGivesTheOneMapAnswer) {
  const AggregationSpec spec = every_kind_spec();
  std::mt19937_64 rng(21);
  struct Case {
    std::string name;
    std::vector<size_t> groups;  // per part
    int64_t universe;
    std::vector<bool> with_null;
    bool twice = false;
  };
  const std::vector<Case> cases = {
      {"one part", {70000}, 100000, {true}},
      {"three parts, shared keys", {50000, 60000, 40000}, 90000, {false, true, true}},
      {"three parts, base with NULL", {30000, 70000, 50000}, 200000, {true, true, false}},
      {"NULL in two parts, not the base", {40000, 30000, 30000}, 70000, {false, true, true}},
      {"NULL in two small parts", {100, 50, 50}, 150, {false, true, true}},
      {"empty parts around two", {0, 45000, 0, 45000}, 60000, {false, false, false, true}},
      {"few groups", {100, 90, 100}, 120, {true, false, true}},
      {"all empty", {0, 0, 0}, 10, {false, false, false}},
      {"one group each", {1, 1, 1}, 3, {false, false, false}},
      {"keys twice in a part", {40000, 40000, 30000}, 60000, {false, true, true}, true},
  };
  for (const Case& c : cases) {
    std::vector<AggregationResult> parts;
    for (size_t p = 0; p < c.groups.size(); ++p)
      parts.push_back(random_part(spec, rng, c.groups[p], c.universe, c.with_null[p], p % 2 == 1, c.twice));
    const AggregationResult want = reference_merge(spec, parts);
    expect_identical(spec, merge_results(spec, parts), want, c.name + ", one thread");
    expect_identical(spec, merge_results(spec, parts, pool_tasks()), want, c.name + ", pool");
    for (const size_t partitions : {2, 8, 64, 1000}) {
      expect_identical(spec, merge_results(spec, parts, pool_tasks(), partitions), want,
                       c.name + ", " + std::to_string(partitions) + " partitions");
    }
    expect_identical(spec, merge_results(spec, parts, {}, 16), want, c.name + ", 16 partitions on one thread");
  }
}

// A run that notes the storage chunks it was asked to hold and was given.
class RecordingRun final : public AggregationRun {
 public:
  RecordingRun(std::vector<uint64_t>* held, std::vector<uint64_t>* sunk) : held_(held), sunk_(sunk) {}
  bool hold(const ColumnIdentity& column, ColumnWidth) override {
    held_->push_back(column.chunk);
    return true;
  }
  void sink(const ChunkInput& chunk) override { sunk_->push_back(chunk.values.at(0).identity.chunk); }
  AggregationResult finalize() override { return {}; }
  AggregationReport report() const override { return {}; }

 private:
  std::vector<uint64_t>* held_;
  std::vector<uint64_t>* sunk_;
};

// A stored chunk goes to run (storage chunk id) mod N, in hold() and sink()
// alike and in every query, so it is read where it was held and stays on
// the device whose column cache has it; chunks of computed columns only go
// round robin.
TEST(SpreadRun, AChunkGoesToTheSameRunInHoldSinkAndEveryQuery) {
  AggregationSpec spec;
  spec.aggregates = {{PartialOp::sum_int, 0, -1}};
  const std::vector<uint64_t> chunk_ids = {7, 8, 9, 10, 11, 12, 40, 41, 3};
  for (int query = 0; query < 2; ++query) {
    std::vector<std::vector<uint64_t>> held(3), sunk(3);
    std::vector<std::unique_ptr<AggregationRun>> runs;
    for (size_t i = 0; i < 3; ++i) runs.push_back(std::make_unique<RecordingRun>(&held[i], &sunk[i]));
    SpreadRun spread(spec, std::move(runs), {"a", "b", "c"}, [](size_t) {});
    for (const uint64_t id : chunk_ids) {
      const ColumnIdentity column{42, id, 1};
      EXPECT_TRUE(spread.hold(column, ColumnWidth::int32));
      ChunkInput chunk;
      chunk.rows = 10;
      chunk.keys = ColumnView{ColumnWidth::int32, nullptr, nullptr, {}};  // computed: no identity
      chunk.values.push_back(ColumnView{ColumnWidth::int32, nullptr, nullptr, column});
      spread.sink(chunk);
    }
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(held[i], sunk[i]) << "run " << i;
      for (const uint64_t id : sunk[i]) EXPECT_EQ(id % 3, i) << "chunk " << id;
    }
    // Computed columns only: round robin.
    std::vector<size_t> before(3);
    for (size_t i = 0; i < 3; ++i) before[i] = sunk[i].size();
    ChunkInput computed;
    computed.rows = 1;
    computed.values.push_back(ColumnView{ColumnWidth::int32, nullptr, nullptr, {}});
    for (int c = 0; c < 3; ++c) spread.sink(computed);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(sunk[i].size(), before[i] + 1) << "run " << i;
  }
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
