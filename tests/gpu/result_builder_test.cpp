// Host-only: the GroupByResult built from extracted groups in the layout the
// aggregator copies back (gpu/aggregator/result_builder.hpp); runs without a GPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gpu/aggregator/result_builder.hpp"
#include "gpu/lane_plan.hpp"

namespace tally::gpu::aggregator {
namespace {

constexpr __int128 kTwo32 = static_cast<__int128>(1) << 32;

// The layout the aggregator copies back: `table_groups` groups of the
// global table, then `direct_groups` of the partitioned output at `direct_at`.
ExtractedGroups extracted(const std::vector<int64_t>& keys, const std::vector<uint8_t>& nulls,
                          const std::vector<uint64_t>& lanes, uint64_t stride, uint64_t table_groups,
                          uint64_t direct_at, uint64_t direct_groups = 0) {
  ExtractedGroups g;
  g.keys = reinterpret_cast<const char*>(keys.data());
  g.lanes = lanes.data();
  g.nulls = nulls.data();
  g.stride = stride;
  g.table_groups = table_groups;
  g.direct_at = direct_at;
  g.direct_groups = direct_groups;
  return g;
}

// count(*), min(v0), sum(v1) over a nullable int4 and a nullable int8: two
// groups of the global table (the second the NULL key) at [0, 2) and one
// group of the partitioned output at [3, 4) of each region (stride 4).
struct Extracted {
  GroupBySpec spec;
  LanePlan plan;
  static constexpr uint64_t kStride = 4, kTableGroups = 2, kDirectAt = 3, kDirectGroups = 1;
  std::vector<int64_t> keys = {10, 0, -99, 30};
  std::vector<uint8_t> nulls = {0, 1, 0};
  std::vector<uint64_t> lanes;

  Extracted() {
    spec.columns = {{ValueType::int32, true}, {ValueType::int64, true}};
    spec.aggregates = {{AggOp::count_star, -1}, {AggOp::min, 0}, {AggOp::sum, 1}};
    plan = plan_lanes(spec);
    lanes.assign(plan.lanes.size() * kStride, 0xdead);
    auto lane = [&](int l, std::vector<uint64_t> v) {
      for (size_t i = 0; i < v.size(); ++i) lanes[static_cast<size_t>(l) * kStride + i] = v[i];
    };
    lane(plan.aggregates[0].nonnull_lane, {5, 2, 0, 7});
    lane(plan.aggregates[1].nonnull_lane, {4, 1, 0, 6});
    lane(plan.aggregates[1].value_lane, {static_cast<uint64_t>(-4), 9, 0, 100});
    lane(plan.aggregates[2].nonnull_lane, {3, 2, 0, 1});
    // Wide sums: low 32-bit halves summed unsigned, high halves signed.
    lane(plan.aggregates[2].value_lane, {0xFFFFFFFFull, 3 * (uint64_t{1} << 32) + 5, 0, 7});
    lane(plan.aggregates[2].value_hi_lane, {static_cast<uint64_t>(-1), 2, 0, 0});
  }

  ExtractedGroups groups() const {
    return extracted(keys, nulls, lanes, kStride, kTableGroups, kDirectAt, kDirectGroups);
  }
};

void expect_groups(const GroupByResult& r) {
  EXPECT_EQ(r.keys, (std::vector<int64_t>{10, 0, 30}));
  EXPECT_EQ(r.key_is_null,
            (std::vector<uint8_t>{0, 1, 0}));  // the partitioned output has no NULL key
  ASSERT_EQ(r.aggregates.size(), 3u);
  EXPECT_EQ(r.aggregates[0].nonnull, (std::vector<int64_t>{5, 2, 7}));
  EXPECT_TRUE(r.aggregates[0].value.empty());
  EXPECT_TRUE(r.aggregates[0].extreme.empty());
  EXPECT_EQ(r.aggregates[1].nonnull, (std::vector<int64_t>{4, 1, 6}));
  EXPECT_EQ(r.aggregates[1].extreme, (std::vector<int64_t>{-4, 9, 100}));
  EXPECT_TRUE(r.aggregates[1].value.empty());
  EXPECT_EQ(r.aggregates[2].nonnull, (std::vector<int64_t>{3, 2, 1}));
  ASSERT_EQ(r.aggregates[2].value.size(), 3u);
  EXPECT_TRUE(r.aggregates[2].value[0] == -1);
  EXPECT_TRUE(r.aggregates[2].value[1] == 5 * kTwo32 + 5);
  EXPECT_TRUE(r.aggregates[2].value[2] == 7);
}

TEST(ResultBuilder, GathersTableGroupsThenPartitionedOutput) {
  const Extracted e;
  expect_groups(build_result(e.spec, e.plan, GroupByResult{}, e.groups()));
}

TEST(ResultBuilder, PreparedArraysAreCutToSizeAndOverwritten) {
  const Extracted e;
  GroupByResult spare;
  EXPECT_TRUE(prepare_result_arrays(spare, e.spec, e.plan, 64, [] { return true; }));
  EXPECT_EQ(spare.keys.size(), 64u);
  EXPECT_EQ(spare.aggregates[2].value.size(), 64u);
  EXPECT_TRUE(spare.aggregates[0].value.empty());  // count(*) keeps no value array
  expect_groups(build_result(e.spec, e.plan, std::move(spare), e.groups()));
}

// The compact form (GroupBySpec::compact_result) over NOT NULL inputs:
// count(*), sum(int4), avg(int4) and sum(float8) count every row of a group
// with the count(*) lane, so they share its array; the int4 sums come back
// as int64; a moment aggregate keeps its own count (its n).
TEST(ResultBuilder, CompactFormSharesEveryRowCountsAndKeepsInt64Sums) {
  GroupBySpec spec;
  spec.columns = {{ValueType::int32, false}, {ValueType::float64, false}};
  spec.aggregates = {{AggOp::count_star, -1}, {AggOp::sum, 0}, {AggOp::avg, 0},
                     {AggOp::sum_float, 1}, {AggOp::moments_float, 1}};
  spec.compact_result = true;
  const LanePlan plan = plan_lanes(spec);
  constexpr uint64_t kStride = 2;
  std::vector<uint64_t> lanes(plan.lanes.size() * kStride, 0);
  auto lane = [&](int l, std::vector<uint64_t> v) {
    for (size_t i = 0; i < v.size(); ++i) lanes[static_cast<size_t>(l) * kStride + i] = v[i];
  };
  lane(plan.aggregates[0].nonnull_lane, {3, 1});
  ASSERT_LT(plan.aggregates[1].value_hi_lane, 0);  // an int4 sum: one 64-bit lane
  lane(plan.aggregates[1].value_lane, {static_cast<uint64_t>(-6), uint64_t{1} << 40});
  lane(plan.aggregates[3].value_lane, {std::bit_cast<uint64_t>(1.5), std::bit_cast<uint64_t>(-2.25)});
  const std::vector<int64_t> keys = {7, 8};
  const std::vector<uint8_t> nulls = {0, 0};
  const ExtractedGroups g = extracted(keys, nulls, lanes, kStride, 2, 2);

  EXPECT_EQ(count_sources(spec, plan), (std::vector<int>{0, 0, 0, 0, 4}));
  GroupByResult spare;
  ASSERT_TRUE(prepare_result_arrays(spare, spec, plan, 64, [] { return true; }));
  EXPECT_TRUE(spare.aggregates[1].nonnull.empty());  // shared: never touched
  EXPECT_EQ(spare.aggregates[1].value64.size(), 64u);
  EXPECT_TRUE(spare.aggregates[1].value.empty());
  const GroupByResult r = build_result(spec, plan, std::move(spare), g);
  EXPECT_EQ(r.count_source, (std::vector<int>{0, 0, 0, 0, 4}));
  EXPECT_EQ(r.aggregates[0].nonnull, (std::vector<int64_t>{3, 1}));
  for (size_t a : {1u, 2u, 3u}) EXPECT_TRUE(r.aggregates[a].nonnull.empty()) << "aggregate " << a;
  EXPECT_EQ(r.aggregates[4].nonnull, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(r.aggregates[1].value64, (std::vector<int64_t>{-6, int64_t{1} << 40}));
  EXPECT_TRUE(r.aggregates[1].value.empty());
  EXPECT_TRUE(r.aggregates[1].value_at(1) == (__int128{1} << 40));
  EXPECT_EQ(r.aggregates[2].value64, r.aggregates[1].value64);
  EXPECT_EQ(r.aggregates[3].real, (std::vector<double>{1.5, -2.25}));

  // The same spare in the full form: value64 of the earlier run is not left behind.
  spec.compact_result = false;
  GroupByResult full = build_result(spec, plan, GroupByResult(r), g);
  EXPECT_TRUE(full.count_source.empty());
  EXPECT_TRUE(full.aggregates[1].value64.empty());
  ASSERT_EQ(full.aggregates[1].value.size(), 2u);
  EXPECT_TRUE(full.aggregates[1].value[0] == -6);
  EXPECT_EQ(full.aggregates[2].nonnull, (std::vector<int64_t>{3, 1}));
}

// The placed form (place_result): where every array holds its source's
// words, the extractor's copies into the arrays it returns make the result
// build_result makes from the same groups; a wide sum is computed from two
// lanes, so a result with one is built instead.
TEST(ResultBuilder, PlacedArraysHoldWhatTheBuildMakes) {
  GroupBySpec spec;
  spec.columns = {{ValueType::int32, true}, {ValueType::float64, true}, {ValueType::int64, true}};
  spec.aggregates = {{AggOp::count_star, -1}, {AggOp::sum, 0},           {AggOp::min, 2},
                     {AggOp::sum_float, 1},   {AggOp::moments_float, 1}, {AggOp::count, 1}};
  spec.compact_result = true;
  const LanePlan plan = plan_lanes(spec);
  constexpr uint64_t kStride = 5, kTableGroups = 3, kDirectAt = 3, kDirectGroups = 2;
  std::vector<uint64_t> lanes(plan.lanes.size() * kStride);
  for (size_t i = 0; i < lanes.size(); ++i) lanes[i] = i * 0x9E3779B97F4A7C15ull;  // every word distinct
  const std::vector<int64_t> keys = {4, 0, -7, 12, 13};
  const std::vector<uint8_t> nulls = {0, 1, 0, 9, 9};  // the direct region's flags are not read
  const ExtractedGroups g = extracted(keys, nulls, lanes, kStride, kTableGroups, kDirectAt, kDirectGroups);
  const GroupByResult built = build_result(spec, plan, GroupByResult{}, g);

  GroupByResult placed;
  const uint64_t total = kTableGroups + kDirectGroups;
  const std::optional<std::vector<PlacedArray>> arrays = place_result(spec, plan, placed, total);
  ASSERT_TRUE(arrays.has_value());
  for (const PlacedArray& a : *arrays) {
    // As the extractor copies: the table region, then the direct region.
    if (a.source == kNullFlagsSource) {
      std::memcpy(a.data, nulls.data(), kTableGroups);
      continue;
    }
    const auto* from = a.source == kKeysSource ? reinterpret_cast<const uint64_t*>(keys.data())
                                               : lanes.data() + static_cast<size_t>(a.source) * kStride;
    std::memcpy(a.data, from, kTableGroups * 8);
    std::memcpy(a.data + kTableGroups * 8, from + kDirectAt, kDirectGroups * 8);
  }
  EXPECT_EQ(placed.keys, built.keys);
  EXPECT_EQ(placed.key_is_null, built.key_is_null);
  EXPECT_EQ(placed.count_source, built.count_source);
  ASSERT_EQ(placed.aggregates.size(), built.aggregates.size());
  for (size_t a = 0; a < built.aggregates.size(); ++a) {
    const AggregateValues &p = placed.aggregates[a], &b = built.aggregates[a];
    EXPECT_EQ(p.op, b.op) << "aggregate " << a;
    EXPECT_EQ(p.nonnull, b.nonnull) << "aggregate " << a;
    EXPECT_EQ(p.value64, b.value64) << "aggregate " << a;
    EXPECT_EQ(p.extreme, b.extreme) << "aggregate " << a;
    EXPECT_EQ(p.value.size(), b.value.size()) << "aggregate " << a;
    const auto bits = [](const std::vector<double>& v) {
      std::vector<uint64_t> out;
      for (double d : v) out.push_back(std::bit_cast<uint64_t>(d));
      return out;
    };
    EXPECT_EQ(bits(p.real), bits(b.real)) << "aggregate " << a;
    EXPECT_EQ(bits(p.squares), bits(b.squares)) << "aggregate " << a;
  }
  EXPECT_FALSE(built.aggregates[1].value64.empty());  // the int4 sum's one lane
  EXPECT_FALSE(built.aggregates[4].squares.empty());

  // A wide sum (int8 input): two lanes make each value.
  const Extracted e;
  GroupByResult not_placed;
  EXPECT_FALSE(place_result(e.spec, e.plan, not_placed, 3).has_value());
}

TEST(ResultBuilder, PreparationStopsOnceTheGpuIsDone) {
  const Extracted e;
  GroupByResult spare;
  EXPECT_FALSE(prepare_result_arrays(spare, e.spec, e.plan, 64, [] { return false; }));
  EXPECT_TRUE(spare.keys.empty());
  EXPECT_GE(spare.keys.capacity(), 64u);  // reserved, not touched
  expect_groups(build_result(e.spec, e.plan, std::move(spare), e.groups()));
}

// Float lanes: double sums as their bits, min/max in the ordered encoding
// (views.cuh's ordered_float), exact sums of squares from two words.
TEST(ResultBuilder, FloatAndMomentLanes) {
  GroupBySpec spec;
  spec.columns = {{ValueType::float64, false}, {ValueType::int32, false}};
  spec.aggregates = {{AggOp::moments_float, 0}, {AggOp::max_float, 0}, {AggOp::moments_int, 1}};
  const LanePlan plan = plan_lanes(spec);
  constexpr uint64_t kStride = 3;
  std::vector<uint64_t> lanes(plan.lanes.size() * kStride, 0);
  auto set = [&](int l, uint64_t g, uint64_t v) { lanes[static_cast<size_t>(l) * kStride + g] = v; };
  auto bits = [](double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
  };
  // The ordered encoding of a double: its bits, magnitude flipped when negative.
  auto ordered = [&](double d) {
    const auto b = static_cast<int64_t>(bits(d));
    return static_cast<uint64_t>(b ^ ((b >> 63) & INT64_MAX));
  };
  set(0, 0, 2);
  set(0, 1, 1);
  set(plan.aggregates[0].value_lane, 0, bits(3.5));
  set(plan.aggregates[0].square_lane, 0, bits(10.25));
  set(plan.aggregates[1].value_lane, 0, ordered(-2.25));
  set(plan.aggregates[1].value_lane, 1, ordered(std::numeric_limits<double>::infinity()));
  set(plan.aggregates[2].value_lane, 0, static_cast<uint64_t>(-7));
  set(plan.aggregates[2].square_lane, 0, 5);  // low words
  set(plan.aggregates[2].square_hi_lane, 0, 3);  // 3 * 2^32
  std::vector<int64_t> keys = {1, 2, 0};
  std::vector<uint8_t> nulls = {0, 0, 0};
  const ExtractedGroups g = extracted(keys, nulls, lanes, kStride, 2, 2);
  const GroupByResult r = build_result(spec, plan, GroupByResult{}, g);
  ASSERT_EQ(r.aggregates.size(), 3u);
  EXPECT_EQ(r.aggregates[0].nonnull, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(r.aggregates[0].real[0], 3.5);
  EXPECT_EQ(r.aggregates[0].squares[0], 10.25);
  EXPECT_EQ(r.aggregates[1].real[0], -2.25);
  EXPECT_EQ(r.aggregates[1].real[1], std::numeric_limits<double>::infinity());
  EXPECT_TRUE(r.aggregates[2].value[0] == -7);
  EXPECT_TRUE(r.aggregates[2].value2[0] == 3 * kTwo32 + 5);
  EXPECT_EQ(float_from_ordered(ordered(-0.5)), -0.5);
  EXPECT_TRUE(std::isnan(float_from_ordered(0x7ff8000000000000ull)));
}

// A result of several hundred thousand groups is built on several threads:
// every array as the lanes say, table groups then the partitioned output.
TEST(ResultBuilder, ALargeResultBuiltOnSeveralThreads) {
  GroupBySpec spec;
  // (Aggregates of one column share its lanes: the moments read a column of their own.)
  spec.columns = {{ValueType::int32, true}, {ValueType::float64, true}, {ValueType::int64, true}, {ValueType::float64, true}};
  spec.aggregates = {{AggOp::count_star, -1}, {AggOp::max, 0}, {AggOp::sum_float, 1}, {AggOp::sum, 2},
                     {AggOp::moments_float, 3}};
  const LanePlan plan = plan_lanes(spec);
  constexpr uint64_t kTable = 300000, kDirectAt = 310000, kDirect = 5000, kStride = kDirectAt + kDirect;
  std::vector<int64_t> keys(kStride, -1);
  std::vector<uint8_t> nulls(kTable, 0);
  std::vector<uint64_t> lanes(plan.lanes.size() * kStride, 0);
  auto lane_at = [&](int l, uint64_t at) -> uint64_t& { return lanes[static_cast<size_t>(l) * kStride + at]; };
  auto bits = [](double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
  };
  // Group i (its position in the result) sits at i, or at kDirectAt + i - kTable.
  auto place = [&](uint64_t i) { return i < kTable ? i : kDirectAt + i - kTable; };
  for (uint64_t i = 0; i < kTable + kDirect; ++i) {
    const uint64_t at = place(i);
    keys[at] = static_cast<int64_t>(i) * 3;
    for (const AggregateLanes& al : plan.aggregates) lane_at(al.nonnull_lane, at) = i % 7 + 1;
    lane_at(plan.aggregates[1].value_lane, at) = static_cast<uint64_t>(static_cast<int64_t>(i) - 5);
    lane_at(plan.aggregates[2].value_lane, at) = bits(static_cast<double>(i) / 4);
    lane_at(plan.aggregates[3].value_lane, at) = i;
    lane_at(plan.aggregates[3].value_hi_lane, at) = i % 3;
    lane_at(plan.aggregates[4].value_lane, at) = bits(static_cast<double>(i));
    lane_at(plan.aggregates[4].square_lane, at) = bits(static_cast<double>(i) * 2);
  }
  nulls[17] = 1;
  const ExtractedGroups g = extracted(keys, nulls, lanes, kStride, kTable, kDirectAt, kDirect);
  const uint64_t n = kTable + kDirect;
  // Every group, each at its place: the threads' ranges of groups cross the
  // two regions' boundary anywhere.
  auto check = [&](const GroupByResult& r) {
    ASSERT_EQ(r.groups(), n);
    ASSERT_EQ(r.aggregates.size(), 5u);
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const bool ok =
          r.keys[i] == static_cast<int64_t>(i) * 3 && r.key_is_null[i] == (i == 17 ? 1 : 0) &&
          r.aggregates[0].nonnull[i] == static_cast<int64_t>(i % 7 + 1) &&
          r.aggregates[1].extreme[i] == static_cast<int64_t>(i) - 5 &&
          r.aggregates[2].real[i] == static_cast<double>(i) / 4 &&
          r.aggregates[3].value[i] == static_cast<__int128>(i) + static_cast<__int128>(i % 3) * kTwo32 &&
          r.aggregates[4].real[i] == static_cast<double>(i) && r.aggregates[4].squares[i] == static_cast<double>(i) * 2;
      if (!ok && wrong++ < 3) ADD_FAILURE() << "group " << i << " built wrong";
    }
    EXPECT_EQ(wrong, 0u);
  };
  check(build_result(spec, plan, GroupByResult{}, g));
  // Into prepared arrays larger than the result: cut to size, overwritten.
  GroupByResult spare;
  EXPECT_TRUE(prepare_result_arrays(spare, spec, plan, kStride + 100, [] { return true; }));
  check(build_result(spec, plan, std::move(spare), g));
}

}  // namespace
}  // namespace tally::gpu::aggregator
