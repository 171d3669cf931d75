// The host's top-codes tables (executor/cpu/top_codes_rows.hpp): an
// OrderedValuesRun whose ordered aggregates read only a top-n's ranks (nth
// picks of the k first ranks, from one end) keeps each key's counts and k
// best codes instead of every row (and, beside count(*) alone, takes its
// groups from those keys), and must finalize to exactly what the full form
// (every value of every group, sorted) gives: int and float
// inputs (NaN, -0, infinities, duplicates), NULL values and a key whose
// values are all NULL, the NULL-key group, keys inside the statistics'
// range (direct entries) and outside it (the tables' probed entries),
// several chunks split on several threads, k from 1 to kMaxTopCodes, ASC
// and DESC. The full form is the path PostgreSQL's answers are checked on
// (tests/sql/top_n.test runs the same queries through either).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>

#include "common/aggregate_engine.hpp"
#include "common/ordered_pick.hpp"
#include "executor/cpu/cpu_engine.hpp"
#include "executor/cpu/ordered_values_run.hpp"
#include "executor/finalize.hpp"

namespace tally::executor {
namespace {

struct Rows {
  std::vector<int64_t> keys;
  std::vector<uint8_t> key_valid, int_valid, float_valid;
  std::vector<int32_t> ints;
  std::vector<double> floats;
};

// Keys 0..299 (the statistics' range) and a few strays outside it; key 7's
// values all NULL; some NULL keys; few distinct values, so ranks tie.
Rows make_rows(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  const double specials[] = {std::nan(""), -0.0, 0.0, INFINITY, -INFINITY};
  const int64_t strays[] = {-5, 300, 1000, int64_t{1} << 40};
  Rows r;
  for (size_t i = 0; i < n; ++i) {
    const bool null_key = rng() % 60 == 0;
    int64_t key = static_cast<int64_t>(rng() % 300);
    if (rng() % 100 == 0) key = strays[rng() % 4];
    r.keys.push_back(null_key ? -1 : key);
    r.key_valid.push_back(null_key ? 0 : 1);
    r.ints.push_back(static_cast<int32_t>(rng() % 2001) - 1000);
    r.int_valid.push_back(key == 7 || rng() % 9 == 0 ? 0 : 1);
    r.floats.push_back(rng() % 30 == 0 ? specials[rng() % 5] : static_cast<double>(rng() % 4000) / 8.0);
    r.float_valid.push_back(key == 7 || rng() % 11 == 0 ? 0 : 1);
  }
  return r;
}

// What runs beside the ranks: count(*) alone (the groups are then the
// tables' keys, no inner run), also a count of the other input (the inner
// run's groups, the tables' keys counting every row), or a sum (the inner
// run's groups, the tables keeping the rows with values only).
enum class Beside { count_rows, count_other, sum_other };

// Runs ranks 0..k-1 of input `input` (0: int4, 1: float8), DESC or not,
// both ways, over two chunks of `rows`, and compares every rank of every
// group, and every count.
void expect_same_ranks(int k, bool descending, int input, bool range_known, Beside beside = Beside::count_rows) {
  SCOPED_TRACE("k=" + std::to_string(k) + (descending ? " desc" : " asc") + " input=" + std::to_string(input) +
               (range_known ? " range known" : " range unknown") + " beside=" + std::to_string(static_cast<int>(beside)));
  AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.threads = 3;
  spec.key_range_known = range_known;
  spec.key_min = 0;
  spec.key_max = 299;
  spec.estimated_groups = 300;
  spec.value_widths = {ColumnWidth::int32, ColumnWidth::float64};
  for (int j = 0; j < k; ++j) spec.aggregates.push_back({PartialOp::ordered_values, input, -1});
  spec.aggregates.push_back({PartialOp::count_rows, -1, -1});
  if (beside == Beside::count_other) spec.aggregates.push_back({PartialOp::count_valid, 1 - input, -1});
  if (beside == Beside::sum_other) spec.aggregates.push_back({PartialOp::sum_int, 0, -1});
  AggregationSpec picking = spec;
  for (int j = 0; j < k; ++j) picking.ordered_picks.push_back(OrderedPick{OrderedPick::Kind::nth, static_cast<double>(j), descending});
  auto engine = make_cpu_engine();
  const cpu::OrderedValuesRun::InnerFactory inner = [&](const AggregationSpec& s) { return engine->start(s); };
  cpu::OrderedValuesRun full(spec, inner);
  cpu::OrderedValuesRun picked(picking, inner);
  // Two chunks, each large enough to be split on every thread.
  for (const uint64_t seed : {uint64_t{1}, uint64_t{2}}) {
    const Rows rows = make_rows(seed + static_cast<uint64_t>(k) * 7, 70000);
    ChunkInput in;
    in.rows = rows.keys.size();
    in.keys = {ColumnWidth::int64, rows.keys.data(), rows.key_valid.data(), {}};
    in.values = {{ColumnWidth::int32, rows.ints.data(), rows.int_valid.data(), {}},
                 {ColumnWidth::float64, rows.floats.data(), rows.float_valid.data(), {}}};
    in.filters.assign(spec.aggregates.size(), nullptr);
    for (auto* run : {&full, &picked}) {
      if (seed == 1) run->begin_pass(0);
      run->sink(in);
    }
  }
  AggregationResult a = full.finalize(), b = picked.finalize();
  bool by_tables = false;
  for (const std::string& line : picked.report().details) by_tables |= line.find("host top-codes tables") != std::string::npos;
  EXPECT_TRUE(by_tables) << "the picked run did not keep its rows in top-codes tables";
  EXPECT_EQ(picked.report().variant == "top-codes", beside == Beside::count_rows)
      << "groups from the tables' keys: " << picked.report().variant;
  ASSERT_EQ(a.groups(), b.groups());
  ASSERT_EQ(a.groups(), 305u);  // 300 keys, 4 strays and the NULL key
  std::map<std::optional<int64_t>, size_t> b_group;
  for (size_t g = 0; g < b.groups(); ++g) {
    const bool valid = g >= b.key_valid.size() || b.key_valid[g] != 0;
    b_group[valid ? std::optional<int64_t>(b.keys[g]) : std::nullopt] = g;
  }
  // Every count and sum beside the ranks, group by group.
  for (size_t c = static_cast<size_t>(k); c < spec.aggregates.size(); ++c) {
    for (size_t g = 0; g < a.groups(); ++g) {
      const bool valid = g >= a.key_valid.size() || a.key_valid[g] != 0;
      const size_t h = b_group.at(valid ? std::optional<int64_t>(a.keys[g]) : std::nullopt);
      ASSERT_EQ(a.states[c].count[g], b.states[c].count[h]) << "aggregate " << c << " key " << a.keys[g];
      if (spec.aggregates[c].op == PartialOp::sum_int) {
        EXPECT_TRUE(a.states[c].sum_int[g] == b.states[c].sum_int[h]) << "aggregate " << c << " key " << a.keys[g];
      }
    }
  }
  const TypeId in_type = input == 0 ? TypeId::int4 : TypeId::float8;
  for (int j = 0; j < k; ++j) {
    const OrderedFinal final{ColumnFinal{AggKind::ordered_nth, in_type, 0}, Value{int64_t{j}}, descending};
    Vector va{SqlType{in_type}}, vb{SqlType{in_type}};
    finalize_ordered_column(final, a.states[static_cast<size_t>(j)], a.groups(), va);
    finalize_ordered_column(final, b.states[static_cast<size_t>(j)], b.groups(), vb);
    for (size_t g = 0; g < a.groups(); ++g) {
      const bool valid = g >= a.key_valid.size() || a.key_valid[g] != 0;
      const size_t h = b_group.at(valid ? std::optional<int64_t>(a.keys[g]) : std::nullopt);
      const bool null_a = !va.nulls.empty() && va.nulls[g], null_b = !vb.nulls.empty() && vb.nulls[h];
      ASSERT_EQ(null_a, null_b) << "rank " << j << " key " << a.keys[g];
      if (null_a) continue;
      if (in_type == TypeId::float8) {
        EXPECT_EQ(0, std::memcmp(&va.floats[g], &vb.floats[h], sizeof(double)))
            << "rank " << j << " key " << a.keys[g] << ": " << va.floats[g] << " vs " << vb.floats[h];
      } else {
        EXPECT_EQ(va.ints[g], vb.ints[h]) << "rank " << j << " key " << a.keys[g];
      }
    }
  }
}

TEST(TopCodesRows, RanksAnswerAsEveryValueSorted) {
  for (const int k : {1, 2, 3, kMaxTopCodes}) {
    for (const bool descending : {false, true}) {
      for (const int input : {0, 1}) expect_same_ranks(k, descending, input, /*range_known=*/true);
    }
  }
}

TEST(TopCodesRows, CountsAndSumsBesideAnswerAsEveryValueSorted) {
  for (const Beside beside : {Beside::count_other, Beside::sum_other}) {
    for (const int input : {0, 1}) expect_same_ranks(2, true, input, /*range_known=*/true, beside);
  }
}

TEST(TopCodesRows, KeysOfUnknownRangeAreProbed) {
  for (const bool descending : {false, true}) expect_same_ranks(2, descending, 1, /*range_known=*/false);
}

// Ranks past kMaxTopCodes, or picks from both ends, are no top-n shape: the
// run keeps every value and sorts it.
TEST(TopCodesRows, OtherPicksKeepEveryValue) {
  EXPECT_FALSE(top_codes_shape({OrderedPick{OrderedPick::Kind::nth, kMaxTopCodes, true}}));
  EXPECT_FALSE(top_codes_shape({OrderedPick{OrderedPick::Kind::nth, 0, true}, OrderedPick{OrderedPick::Kind::nth, 0, false}}));
  EXPECT_FALSE(top_codes_shape({OrderedPick{OrderedPick::Kind::disc, 0.5, false}}));
  const auto shape = top_codes_shape({OrderedPick{OrderedPick::Kind::nth, 2, false}, OrderedPick{OrderedPick::Kind::nth, 0, false}});
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->k, 3);
  EXPECT_FALSE(shape->largest);
}

}  // namespace
}  // namespace tally::executor
