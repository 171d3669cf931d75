// The CPU engine's ordered-set and DISTINCT states (PartialOp::ordered_values,
// count_distinct) against a reference (std::map of sorted vectors), under
// every variant of the other aggregates, NULL keys and values, FILTER masks,
// NaN, -0 and 1 or 2 threads; and the compact form's count sources after the
// ordered aggregates are taken out of the inner run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>

#include "common/aggregate_engine.hpp"
#include "common/memory_tracker.hpp"
#include "common/ordered_code.hpp"
#include "executor/cpu/cpu_engine.hpp"
#include "tests/executor/packed_key_cases.hpp"

namespace tally::executor {
namespace {

struct Case {
  std::string variant;
  int threads;
  uint64_t memory_budget;
  // AggregationSpec::input_rows: 0, or a hint of the rows to come that is
  // short of them, near them or far past them (each answer the same).
  uint64_t input_rows = 0;
};

struct Reference {
  int64_t rows = 0;
  std::vector<int64_t> ints;        // non-NULL int inputs
  std::vector<double> floats;       // float inputs that pass the FILTER
  std::vector<uint64_t> all_float_codes;  // every float input's order code
  int64_t valid_ints = 0;
};

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class CpuOrderedValuesTest : public ::testing::TestWithParam<Case> {};

TEST_P(CpuOrderedValuesTest, MatchesReference) {
  const Case c = GetParam();
  std::mt19937_64 rng(7);
  constexpr int64_t kKeyRange = 3000;
  AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.key_range_known = true;
  spec.key_min = 0;
  spec.key_max = kKeyRange - 1;
  spec.estimated_groups = kKeyRange;
  spec.threads = c.threads;
  spec.memory_budget = c.memory_budget;
  spec.forced_variant = c.variant;
  spec.compact_result = true;
  spec.input_rows = c.input_rows;
  // An ordered aggregate between two that share a count: the count sources
  // must still name the right aggregates.
  spec.aggregates = {{PartialOp::count_rows, -1, -1},      {PartialOp::ordered_values, 0, -1},
                     {PartialOp::count_valid, 0, -1},     {PartialOp::count_distinct, 0, -1},
                     {PartialOp::ordered_values, 1, -1},  {PartialOp::count_distinct, 1, -1},
                     {PartialOp::count_rows, -1, -1},     {PartialOp::count_distinct, 1, -1}};
  spec.value_widths = {ColumnWidth::int32, ColumnWidth::float64};
  // A hint far past the rows, under a statement budget that refuses the
  // arrays it asks for: the arrays grow by doubling within the budget.
  std::optional<MemoryScope> budget;
  if (c.input_rows >= 10000000) budget.emplace(std::make_shared<MemoryTracker>(uint64_t{16} << 20));
  auto engine = make_cpu_engine();
  auto run = engine->start(spec);

  struct Chunk {
    std::vector<int64_t> keys;
    std::vector<uint8_t> key_valid, int_valid, filter;
    std::vector<int32_t> ints;
    std::vector<double> floats;
  };
  std::vector<Chunk> chunks(3);
  std::map<std::optional<int64_t>, Reference> reference;
  const double specials[] = {std::nan(""), -std::nan(""), -0.0, 0.0, INFINITY, -INFINITY};
  for (auto& chunk : chunks) {
    const size_t rows = 30000 + rng() % 1000;
    for (size_t r = 0; r < rows; ++r) {
      const bool null_key = rng() % 40 == 0;
      const int64_t key = static_cast<int64_t>(rng() % kKeyRange);
      const bool null_value = rng() % 10 == 0;
      const auto value = static_cast<int32_t>(rng() % 21) - 10;  // duplicates
      const double f = rng() % 16 == 0 ? specials[rng() % 6] : static_cast<double>(rng() % 64) / 4.0;
      const uint8_t pass = rng() % 4 != 0 ? 1 : 0;
      chunk.keys.push_back(null_key ? 12345 : key);
      chunk.key_valid.push_back(null_key ? 0 : 1);
      chunk.ints.push_back(value);
      chunk.int_valid.push_back(null_value ? 0 : 1);
      chunk.floats.push_back(f);
      chunk.filter.push_back(pass);
      Reference& ref = reference[null_key ? std::nullopt : std::optional<int64_t>(key)];
      ++ref.rows;
      if (!null_value) {
        ref.ints.push_back(value);
        ++ref.valid_ints;
      }
      if (pass) ref.floats.push_back(f);
      ref.all_float_codes.push_back(order_code_of_float(f));
    }
  }
  for (int pass = 0; pass < run->passes(); ++pass) {
    run->begin_pass(pass);
    for (auto& chunk : chunks) {
      ChunkInput in;
      in.rows = chunk.keys.size();
      in.keys = {ColumnWidth::int64, chunk.keys.data(), chunk.key_valid.data(), {}};
      in.values = {{ColumnWidth::int32, chunk.ints.data(), chunk.int_valid.data(), {}},
                   {ColumnWidth::float64, chunk.floats.data(), nullptr, {}}};
      // Aggregates 3 and 5 share the rows of 1 and 4 (same input, same
      // FILTER); 7 reads 4's input without its FILTER, so keeps its own.
      in.filters = {nullptr, nullptr, nullptr, nullptr, chunk.filter.data(), chunk.filter.data(), nullptr, nullptr};
      run->sink(in);
    }
  }
  AggregationResult result = run->finalize();
  ASSERT_EQ(result.groups(), reference.size());
  ASSERT_EQ(result.states.size(), spec.aggregates.size());
  auto count_of = [&](size_t a) -> const std::vector<int64_t>& {
    const size_t source = result.count_source.empty() ? a : static_cast<size_t>(result.count_source[a]);
    EXPECT_NE(spec.aggregates[source].op, PartialOp::ordered_values);
    EXPECT_NE(spec.aggregates[source].op, PartialOp::count_distinct);
    return result.states[source].count;
  };
  for (size_t g = 0; g < result.groups(); ++g) {
    const std::optional<int64_t> key = result.key_valid[g] ? std::optional<int64_t>(result.keys[g]) : std::nullopt;
    ASSERT_TRUE(reference.count(key));
    Reference& ref = reference[key];
    EXPECT_EQ(count_of(0)[g], ref.rows);
    EXPECT_EQ(count_of(2)[g], ref.valid_ints);
    EXPECT_EQ(count_of(6)[g], ref.rows);
    // Integers: sorted values and the distinct count.
    std::sort(ref.ints.begin(), ref.ints.end());
    const PartialStates& si = result.states[1];
    ASSERT_EQ(si.offsets.size(), result.groups() + 1);
    const std::vector<int64_t> got(si.ordered_int.begin() + static_cast<long>(si.offsets[g]),
                                   si.ordered_int.begin() + static_cast<long>(si.offsets[g + 1]));
    EXPECT_EQ(got, ref.ints);
    const auto distinct_ints = std::unique(ref.ints.begin(), ref.ints.end()) - ref.ints.begin();
    EXPECT_EQ(result.states[3].count[g], distinct_ints);
    // Floats: PostgreSQL's order (NaN greatest), -0 next to 0.
    const PartialStates& sf = result.states[4];
    const size_t begin = sf.offsets[g], end = sf.offsets[g + 1];
    ASSERT_EQ(end - begin, ref.floats.size());
    std::vector<uint64_t> codes;
    for (double f : ref.floats) codes.push_back(order_code_of_float(f));
    std::sort(codes.begin(), codes.end());
    int64_t distinct_floats = 0;
    for (size_t i = 0; i < codes.size(); ++i) {
      const double want = float_of_order_code(codes[i]);
      const double have = sf.ordered_float[begin + i];
      EXPECT_TRUE(same_bits(want, have) || (std::isnan(want) && std::isnan(have))) << want << " vs " << have;
      if (i > 0 && !std::isnan(have)) {
        const double before = sf.ordered_float[begin + i - 1];
        EXPECT_FALSE(std::isnan(before));
        EXPECT_LE(before, have);
      }
      const bool same = i > 0 && (float_of_order_code(codes[i]) == float_of_order_code(codes[i - 1]) ||
                                  (std::isnan(want) && std::isnan(float_of_order_code(codes[i - 1]))));
      distinct_floats += same ? 0 : 1;
    }
    EXPECT_EQ(result.states[5].count[g], distinct_floats);
    std::vector<double> all;
    for (uint64_t c : ref.all_float_codes) all.push_back(float_of_order_code(c));
    std::sort(all.begin(), all.end(), [](double x, double y) { return order_code_of_float(x) < order_code_of_float(y); });
    int64_t distinct_all = 0;
    for (size_t i = 0; i < all.size(); ++i) {
      distinct_all += i == 0 || !(all[i] == all[i - 1] || (std::isnan(all[i]) && std::isnan(all[i - 1])));
    }
    EXPECT_EQ(result.states[7].count[g], distinct_all);
  }
  const AggregationReport report = run->report();
  EXPECT_EQ(report.engine, "cpu");
  bool named = false;
  for (const std::string& d : report.details) named |= d.find(" per group (host") != std::string::npos;
  EXPECT_TRUE(named);
}

INSTANTIATE_TEST_SUITE_P(Variants, CpuOrderedValuesTest,
                         ::testing::Values(Case{"dense", 1, 0}, Case{"dense", 2, 0}, Case{"hash", 2, 0},
                                           Case{"hash", 2, 64 * 1024}, Case{"dense-radix", 2, 0},
                                           Case{"hash-radix", 1, 0}, Case{"hash-radix", 2, 64 * 1024},
                                           Case{"dense", 2, 0, 40000}, Case{"dense", 1, 0, 93000},
                                           Case{"hash-radix", 2, 64 * 1024, 10000000}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.variant;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name + "_" + std::to_string(info.param.threads) + "threads" +
                                  (info.param.memory_budget ? "_passes" : "") +
                                  (info.param.input_rows ? "_hint" + std::to_string(info.param.input_rows) : "");
                         });

// Only ordered aggregates over few large groups: each group radix sorted by
// one thread (1 thread), or one sort across threads per group (2 threads);
// float codes with negatives, NaN and -0 among them.
class CpuOrderedLargeGroups : public ::testing::TestWithParam<int> {};

TEST_P(CpuOrderedLargeGroups, SortedLikeStdSort) {
  AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.threads = GetParam();
  spec.aggregates = {{PartialOp::ordered_values, 0, -1}, {PartialOp::count_distinct, 0, -1},
                     {PartialOp::ordered_values, 1, -1}};
  spec.value_widths = {ColumnWidth::int64, ColumnWidth::float64};
  auto run = make_cpu_engine()->start(spec);
  std::mt19937_64 rng(3);
  constexpr size_t kRows = 600000;
  std::vector<int64_t> keys(kRows), values(kRows);
  std::vector<double> floats(kRows);
  std::map<int64_t, std::vector<int64_t>> want;
  std::map<int64_t, std::vector<uint64_t>> want_codes;
  for (size_t r = 0; r < kRows; ++r) {
    keys[r] = static_cast<int64_t>(rng() % 3);
    values[r] = static_cast<int64_t>(rng() % 100000) - 50000 + (r % 7 == 0 ? INT64_MIN / 2 : 0);
    floats[r] = r % 101 == 0 ? std::nan("") : r % 103 == 0 ? -0.0 : (static_cast<double>(rng() % 20000) - 10000) / 3;
    want[keys[r]].push_back(values[r]);
    want_codes[keys[r]].push_back(order_code_of_float(floats[r]));
  }
  ChunkInput in;
  in.rows = kRows;
  in.keys = {ColumnWidth::int64, keys.data(), nullptr, {}};
  in.values = {{ColumnWidth::int64, values.data(), nullptr, {}}, {ColumnWidth::float64, floats.data(), nullptr, {}}};
  in.filters = {nullptr, nullptr, nullptr};
  run->sink(in);
  AggregationResult result = run->finalize();
  ASSERT_EQ(result.groups(), 3u);
  for (size_t g = 0; g < 3; ++g) {
    auto& w = want[result.keys[g]];
    std::sort(w.begin(), w.end());
    const auto& s = result.states[0];
    EXPECT_TRUE(std::equal(w.begin(), w.end(), s.ordered_int.begin() + static_cast<long>(s.offsets[g]),
                           s.ordered_int.begin() + static_cast<long>(s.offsets[g + 1])));
    EXPECT_EQ(result.states[1].count[g], std::unique(w.begin(), w.end()) - w.begin());
    auto& codes = want_codes[result.keys[g]];
    std::sort(codes.begin(), codes.end());
    const auto& f = result.states[2];
    ASSERT_EQ(f.offsets[g + 1] - f.offsets[g], codes.size());
    for (size_t i = 0; i < codes.size(); ++i) {
      ASSERT_EQ(order_code_of_float(f.ordered_float[f.offsets[g] + i]), codes[i]) << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, CpuOrderedLargeGroups, ::testing::Values(1, 2));

// Through the executor: the engine path answers as the generic path (the
// per-row accumulators), over packed, single and expression keys, and
// EXPLAIN ANALYZE says the engine had the values per group on the host
// (sorted, or selected at the positions the percentiles read).
TEST(CpuOrderedValues, QueriesAnswerAsTheGenericPath) {
  testing::PackedKeyTables tables("tally-cpu-ordered-values");
  tables.create();
  const char* queries[] = {
      "SELECT id4, id5, percentile_cont(0.5) WITHIN GROUP (ORDER BY f), stddev(f), count(*) FROM h GROUP BY id4, id5",
      "SELECT id4, percentile_disc(0.3) WITHIN GROUP (ORDER BY v DESC), mode() WITHIN GROUP (ORDER BY d), "
      "count(DISTINCT v), count(DISTINCT f), sum(v) FROM h GROUP BY id4",
      "SELECT s, percentile_cont(0.75) WITHIN GROUP (ORDER BY big), mode() WITHIN GROUP (ORDER BY ts DESC), "
      "count(DISTINCT b) FROM h GROUP BY s",
      "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY f), percentile_disc(0.5) WITHIN GROUP (ORDER BY v), "
      "count(DISTINCT id4) FROM h",
      "SELECT v % 3, percentile_cont(0.1) WITHIN GROUP (ORDER BY f) FILTER (WHERE b), count(DISTINCT s) FROM h "
      "GROUP BY v % 3",
  };
  for (const char* sql : queries) {
    EXPECT_EQ(tables.rows_on("cpu", sql), tables.rows_on("generic", sql)) << sql;
    const std::string plan = tables.explain_on("cpu", sql);
    EXPECT_NE(plan.find("Engine: cpu, variant"), std::string::npos) << sql << "\n" << plan;
    EXPECT_NE(plan.find(" per group (host"), std::string::npos) << sql << "\n" << plan;
  }
}

}  // namespace
}  // namespace tally::executor
