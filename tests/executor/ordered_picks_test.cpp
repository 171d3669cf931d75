// Percentiles from picked values (common/ordered_pick.hpp's OrderedPick,
// PartialStates::ordered_pos and one_pick): OrderedValuesRun with a collector that keeps
// the rows and answers only the picked positions must finalize to exactly
// what the full form (every value of every group) gives, for
// percentile_cont and percentile_disc, ASC and DESC, fractions at 0, 1 and
// between, int and float inputs (NaN, -0, infinities), the NULL-key group,
// groups of one and two values and groups whose every value is NULL. The
// full form is the path PostgreSQL's answers are checked on (the SQL and
// differential tests); the GPU collector picks with the same positions on
// the device (tests/gpu/gpu_device_ordered_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <random>

#include "common/aggregate_engine.hpp"
#include "common/ordered_code.hpp"
#include "common/ordered_rows.hpp"
#include "executor/cpu/cpu_engine.hpp"
#include "executor/cpu/ordered_values_run.hpp"
#include "executor/finalize.hpp"

namespace tally::executor {
namespace {

// Keeps every slot's (key, code) rows on the host and sorts them by (key,
// code) at the end: the shape of the device collector, with the base
// class's picked() (sorted, then picked on the host).
class HostRows final : public OrderedRowsCollector {
 public:
  bool hold(const ColumnIdentity&, ColumnWidth) override { return false; }
  void collect(const ChunkInput& chunk, const std::vector<OrderedRowsSlot>& slots) override {
    rows_.resize(slots.size());
    for (size_t s = 0; s < slots.size(); ++s) {
      const ColumnView& v = chunk.values.at(static_cast<size_t>(slots[s].input));
      for (size_t r = 0; r < chunk.rows; ++r) {
        if ((v.validity && !v.validity[r]) || (slots[s].filter && !slots[s].filter[r])) continue;
        const uint64_t code = v.width == ColumnWidth::int32 ? order_code_of_int(static_cast<const int32_t*>(v.data)[r])
                                                            : order_code_of_float(static_cast<const double*>(v.data)[r]);
        const bool null_key = chunk.keys.validity && !chunk.keys.validity[r];
        const int64_t key = static_cast<const int64_t*>(chunk.keys.data)[r];
        rows_[s].push_back({null_key ? std::nullopt : std::optional<int64_t>(key), code});
      }
    }
  }
  KeyedSegments sorted(size_t slot) override {
    KeyedSegments out;
    if (slot >= rows_.size()) return out;
    auto rows = rows_[slot];
    // Keyed rows by (key, code), the NULL-key rows after them.
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      if (a.key.has_value() != b.key.has_value()) return a.key.has_value();
      if (a.key != b.key) return *a.key < *b.key;
      return a.code < b.code;
    });
    for (const Row& r : rows) {
      out.codes.push_back(r.code);
      if (!r.key) {
        ++out.null_key_rows;
      } else if (out.keys.empty() || out.keys.back() != *r.key) {
        out.keys.push_back(*r.key);
        out.counts.push_back(1);
      } else {
        ++out.counts.back();
      }
    }
    return out;
  }
  std::string name() const override { return "host rows"; }

 private:
  struct Row {
    std::optional<int64_t> key;
    uint64_t code;
  };
  std::vector<std::vector<Row>> rows_;
};

struct Call {
  AggKind kind;
  double fraction;
  bool descending;
  int input;  // 0: int4, 1: float8 (percentile_cont reaches the engines over float8 alone)
};

TEST(OrderedPicks, PickedPercentilesAnswerAsEveryValue) {
  std::mt19937_64 rng(11);
  const std::vector<Call> calls = {
      {AggKind::percentile_cont, 0.5, false, 1},  {AggKind::percentile_cont, 0.0, false, 1},
      {AggKind::percentile_cont, 1.0, true, 1},   {AggKind::percentile_cont, 1.0 / 3, true, 1},
      {AggKind::percentile_disc, 0.25, false, 1}, {AggKind::percentile_disc, 0.999, true, 1},
      {AggKind::percentile_disc, 0.0, false, 0},  {AggKind::percentile_disc, 0.5, true, 0},
      {AggKind::percentile_cont, 0.75, false, 1}, {AggKind::percentile_disc, 1.0, false, 0},
  };
  AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.threads = 2;
  spec.value_widths = {ColumnWidth::int32, ColumnWidth::float64};
  for (const Call& c : calls) spec.aggregates.push_back({PartialOp::ordered_values, c.input, -1});
  spec.aggregates.push_back({PartialOp::count_rows, -1, -1});
  AggregationSpec picking = spec;
  for (const Call& c : calls) {
    picking.ordered_picks.push_back(OrderedPick{
        c.kind == AggKind::percentile_cont ? OrderedPick::Kind::cont : OrderedPick::Kind::disc, c.fraction, c.descending});
  }
  auto engine = make_cpu_engine();
  const cpu::OrderedValuesRun::InnerFactory inner = [&](const AggregationSpec& s) { return engine->start(s); };
  cpu::OrderedValuesRun full(spec, inner);
  cpu::OrderedValuesRun picked(picking, inner, {}, "", std::make_unique<HostRows>());
  // Without a collector: the host selects each group's picks (nth_element).
  cpu::OrderedValuesRun selected(picking, inner);

  // Groups of every size from 1 to ~600 values; key 7 has only NULL values;
  // some NULL keys.
  std::vector<int64_t> keys;
  std::vector<uint8_t> key_valid, int_valid, float_valid;
  std::vector<int32_t> ints;
  std::vector<double> floats;
  const double specials[] = {std::nan(""), -0.0, 0.0, INFINITY, -INFINITY};
  for (int64_t k = 0; k < 300; ++k) {
    const int64_t rows = k < 20 ? k % 3 + 1 : static_cast<int64_t>(rng() % 600) + 1;
    for (int64_t r = 0; r < rows; ++r) {
      const bool null_key = rng() % 50 == 0;
      keys.push_back(null_key ? -1 : k);
      key_valid.push_back(null_key ? 0 : 1);
      ints.push_back(static_cast<int32_t>(rng() % 41) - 20);
      int_valid.push_back(k == 7 || rng() % 9 == 0 ? 0 : 1);
      floats.push_back(rng() % 20 == 0 ? specials[rng() % 5] : static_cast<double>(rng() % 1000) / 8.0);
      float_valid.push_back(k == 7 || rng() % 11 == 0 ? 0 : 1);
    }
  }
  ChunkInput in;
  in.rows = keys.size();
  in.keys = {ColumnWidth::int64, keys.data(), key_valid.data(), {}};
  in.values = {{ColumnWidth::int32, ints.data(), int_valid.data(), {}},
               {ColumnWidth::float64, floats.data(), float_valid.data(), {}}};
  in.filters.assign(spec.aggregates.size(), nullptr);
  for (auto* run : {&full, &picked, &selected}) {
    ASSERT_EQ(run->passes(), 1);
    run->begin_pass(0);
    run->sink(in);
  }
  const AggregationResult a = full.finalize();
  for (auto* run : {&picked, &selected}) {
    SCOPED_TRACE(run == &picked ? "picked by the collector" : "selected on the host");
    const AggregationResult b = run->finalize();
    ASSERT_EQ(a.groups(), b.groups());
    ASSERT_EQ(a.groups(), 301u);  // 300 keys and the NULL key
    // Group of each key in b.
    std::map<std::optional<int64_t>, size_t> b_group;
    for (size_t g = 0; g < b.groups(); ++g) {
      const bool valid = g >= b.key_valid.size() || b.key_valid[g] != 0;
      b_group[valid ? std::optional<int64_t>(b.keys[g]) : std::nullopt] = g;
    }
    // Calls of one input share its rows, so each holds the picks of all of
    // them: 1 or 2 per call of the input and group, not every value.
    size_t per_input[2] = {0, 0};
    for (const Call& call : calls) per_input[call.input] += call.kind == AggKind::percentile_cont ? 2 : 1;
    for (size_t c = 0; c < calls.size(); ++c) {
      const Call& call = calls[c];
      EXPECT_TRUE(a.states[c].ordered_pos.empty());
      // A pick of one position (percentile_disc) comes as the group's value
      // itself (PartialStates::one_pick); percentile_cont's two with positions.
      EXPECT_EQ(b.states[c].one_pick, call.kind == AggKind::percentile_disc) << "call " << c;
      EXPECT_TRUE(b.states[c].one_pick || !b.states[c].ordered_pos.empty()) << "call " << c << " not picked";
      EXPECT_LE(b.states[c].ordered_pos.size(), per_input[call.input] * b.groups()) << "call " << c;
      const TypeId in_type = call.input == 0 ? TypeId::int4 : TypeId::float8;
      const OrderedFinal final{ColumnFinal{call.kind, in_type, 0}, Value{call.fraction}, call.descending};
      const SqlType out_type{call.kind == AggKind::percentile_cont || call.input == 1 ? TypeId::float8 : TypeId::int4};
      Vector va(out_type), vb(out_type);
      finalize_ordered_column(final, a.states[c], a.groups(), va);
      finalize_ordered_column(final, b.states[c], b.groups(), vb);
      for (size_t g = 0; g < a.groups(); ++g) {
        const bool valid = g >= a.key_valid.size() || a.key_valid[g] != 0;
        const size_t h = b_group.at(valid ? std::optional<int64_t>(a.keys[g]) : std::nullopt);
        const bool null_a = !va.nulls.empty() && va.nulls[g], null_b = !vb.nulls.empty() && vb.nulls[h];
        ASSERT_EQ(null_a, null_b) << "call " << c << " key " << a.keys[g];
        if (null_a) continue;
        if (out_type.id == TypeId::float8) {
          EXPECT_EQ(0, std::memcmp(&va.floats[g], &vb.floats[h], sizeof(double)))
              << "call " << c << " key " << a.keys[g] << ": " << va.floats[g] << " vs " << vb.floats[h];
        } else {
          EXPECT_EQ(va.ints[g], vb.ints[h]) << "call " << c << " key " << a.keys[g];
        }
      }
    }
  }
  // Key 7's values are all NULL: every percentile of it is NULL (checked
  // above against the full form); and the full form has it empty.
  EXPECT_TRUE(std::any_of(a.keys.begin(), a.keys.end(), [](int64_t k) { return k == 7; }));
}

// -0 and 0 are one value, NaN one value, everything else its code.
TEST(OrderedPicks, SameOrderValueAsPostgres) {
  EXPECT_TRUE(same_order_value(order_code_of_float(-0.0), order_code_of_float(0.0), true));
  EXPECT_TRUE(same_order_value(order_code_of_float(0.0), order_code_of_float(-0.0), true));
  EXPECT_FALSE(same_order_value(order_code_of_float(-0.0), order_code_of_float(0.0), false));
  EXPECT_TRUE(same_order_value(order_code_of_float(std::nan("")), order_code_of_float(-std::nan("")), true));
  EXPECT_FALSE(same_order_value(order_code_of_float(1.0), order_code_of_float(-1.0), true));
  EXPECT_FALSE(same_order_value(order_code_of_float(INFINITY), order_code_of_float(std::nan("")), true));
  EXPECT_FALSE(same_order_value(order_code_of_int(0), order_code_of_int(-1), false));
  // The integer codes of -0's and 0's bit patterns are two values.
  EXPECT_FALSE(same_order_value(kOrderCodeOfMinusZero, kOrderCodeOfZero, false));
}

// count(DISTINCT) counted per key by a collector (the base class's
// distinct_counts over its sorted rows, as the GPU counts on the device)
// gives each group what the host's count over every value gives: int and
// float inputs (-0 beside 0, NaNs, infinities), the NULL-key group, a key
// whose values are all NULL, and an input shared with a percentile (whose
// rows are then sorted and counted on the host).
TEST(OrderedPicks, DistinctCountsPerKeyAnswerAsEveryValue) {
  std::mt19937_64 rng(5);
  AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.threads = 2;
  spec.value_widths = {ColumnWidth::int32, ColumnWidth::float64, ColumnWidth::float64};
  spec.aggregates = {{PartialOp::count_distinct, 0, -1},
                     {PartialOp::count_distinct, 1, -1},
                     {PartialOp::count_distinct, 1, -1},
                     {PartialOp::count_distinct, 2, -1},
                     {PartialOp::ordered_values, 2, -1},
                     {PartialOp::count_rows, -1, -1}};
  auto engine = make_cpu_engine();
  const cpu::OrderedValuesRun::InnerFactory inner = [&](const AggregationSpec& s) { return engine->start(s); };
  cpu::OrderedValuesRun full(spec, inner);
  cpu::OrderedValuesRun counted(spec, inner, {}, "", std::make_unique<HostRows>());
  std::vector<int64_t> keys;
  std::vector<uint8_t> key_valid, valid[3];
  std::vector<int32_t> ints;
  std::vector<double> floats[2];
  const double specials[] = {std::nan(""), -std::nan(""), -0.0, 0.0, INFINITY, -INFINITY};
  for (int64_t k = 0; k < 200; ++k) {
    const int64_t rows = static_cast<int64_t>(rng() % 300) + 1;
    for (int64_t r = 0; r < rows; ++r) {
      const bool null_key = rng() % 40 == 0;
      keys.push_back(null_key ? -1 : k);
      key_valid.push_back(null_key ? 0 : 1);
      ints.push_back(static_cast<int32_t>(rng() % 61) - 30);
      for (auto& f : floats) f.push_back(rng() % 4 == 0 ? specials[rng() % 6] : static_cast<double>(rng() % 50) / 4.0);
      for (auto& v : valid) v.push_back(k == 3 || rng() % 7 == 0 ? 0 : 1);
    }
  }
  ChunkInput in;
  in.rows = keys.size();
  in.keys = {ColumnWidth::int64, keys.data(), key_valid.data(), {}};
  in.values = {{ColumnWidth::int32, ints.data(), valid[0].data(), {}},
               {ColumnWidth::float64, floats[0].data(), valid[1].data(), {}},
               {ColumnWidth::float64, floats[1].data(), valid[2].data(), {}}};
  in.filters.assign(spec.aggregates.size(), nullptr);
  for (auto* run : {&full, &counted}) {
    run->begin_pass(0);
    run->sink(in);
  }
  AggregationResult a = full.finalize(), b = counted.finalize();
  ASSERT_EQ(a.groups(), 201u);  // 200 keys and the NULL key
  ASSERT_EQ(b.groups(), a.groups());
  std::map<std::optional<int64_t>, size_t> b_group;
  for (size_t g = 0; g < b.groups(); ++g) {
    const bool is_valid = g >= b.key_valid.size() || b.key_valid[g] != 0;
    b_group[is_valid ? std::optional<int64_t>(b.keys[g]) : std::nullopt] = g;
  }
  int64_t differing = 0;
  for (size_t c = 0; c < 4; ++c) {
    ASSERT_EQ(a.states[c].count.size(), a.groups()) << "call " << c;
    ASSERT_EQ(b.states[c].count.size(), b.groups()) << "call " << c;
    for (size_t g = 0; g < a.groups(); ++g) {
      const bool is_valid = g >= a.key_valid.size() || a.key_valid[g] != 0;
      const std::optional<int64_t> key = is_valid ? std::optional<int64_t>(a.keys[g]) : std::nullopt;
      EXPECT_EQ(a.states[c].count[g], b.states[c].count[b_group.at(key)]) << "call " << c << " key " << (key ? *key : -1);
      if (key == 3) EXPECT_EQ(a.states[c].count[g], 0) << "call " << c;
      differing += c > 0 && a.states[c].count[g] != a.states[0].count[g];
    }
  }
  EXPECT_GT(differing, 0);  // the inputs are not one another's
}

}  // namespace
}  // namespace tally::executor
