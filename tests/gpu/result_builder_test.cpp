// Host-only: the GroupByResult built from extracted groups in the layout the
// aggregator copies back (gpu/aggregator/result_builder.hpp); runs without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpu/aggregator/result_builder.hpp"
#include "gpu/lane_plan.hpp"

namespace tally::gpu::aggregator {
namespace {

constexpr __int128 kTwo32 = static_cast<__int128>(1) << 32;

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
    ExtractedGroups g;
    g.keys = reinterpret_cast<const char*>(keys.data());
    g.lanes = lanes.data();
    g.nulls = nulls.data();
    g.stride = kStride;
    g.table_groups = kTableGroups;
    g.direct_at = kDirectAt;
    g.direct_groups = kDirectGroups;
    return g;
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
  EXPECT_TRUE(prepare_result_arrays(spare, e.spec, 64, [] { return true; }));
  EXPECT_EQ(spare.keys.size(), 64u);
  EXPECT_EQ(spare.aggregates[2].value.size(), 64u);
  EXPECT_TRUE(spare.aggregates[0].value.empty());  // count(*) keeps no value array
  expect_groups(build_result(e.spec, e.plan, std::move(spare), e.groups()));
}

TEST(ResultBuilder, PreparationStopsOnceTheGpuIsDone) {
  const Extracted e;
  GroupByResult spare;
  EXPECT_FALSE(prepare_result_arrays(spare, e.spec, 64, [] { return false; }));
  EXPECT_TRUE(spare.keys.empty());
  EXPECT_GE(spare.keys.capacity(), 64u);  // reserved, not touched
  expect_groups(build_result(e.spec, e.plan, std::move(spare), e.groups()));
}

}  // namespace
}  // namespace tally::gpu::aggregator
