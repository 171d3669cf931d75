// Host-only: how aggregates map onto accumulator lanes (runs without a GPU).
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "gpu/lane_plan.hpp"

namespace tally::gpu {
namespace {

TEST(LanePlan, SharesNonNullCountsAndSplitsWideSums) {
  GroupBySpec s;
  s.columns = {{ValueType::int32, true}, {ValueType::int64, true}};
  s.aggregates = {{AggOp::count_star, -1}, {AggOp::count, 0}, {AggOp::sum, 0}, {AggOp::avg, 0}, {AggOp::sum, 1}};
  const LanePlan p = plan_lanes(s);
  // count_rows, count_valid(0), sum32(0), count_valid(1), sum_lo(1), sum_hi(1)
  ASSERT_EQ(p.lanes.size(), 6u);
  EXPECT_EQ(p.lanes[0].kind, LaneKind::count_rows);
  EXPECT_EQ(p.aggregates[1].nonnull_lane, p.aggregates[2].nonnull_lane);  // count(v) and sum(v) share
  EXPECT_EQ(p.aggregates[2].value_lane, p.aggregates[3].value_lane);      // avg reuses sum's lane
  EXPECT_GE(p.aggregates[4].value_hi_lane, 0);
  EXPECT_EQ(p.lanes[static_cast<size_t>(p.aggregates[4].value_hi_lane)].kind, LaneKind::sum_hi);
  EXPECT_EQ(p.shared_bytes_per_slot(), 4u + 4u + 8u + 4u + 8u + 8u);
}

TEST(LanePlan, NotNullColumnCountsRows) {
  GroupBySpec s;
  s.columns = {{ValueType::int32, false}};
  s.aggregates = {{AggOp::sum, 0}};
  const LanePlan p = plan_lanes(s);
  EXPECT_EQ(p.lanes.size(), 2u);  // count_rows + sum32: no separate non-NULL count
  EXPECT_EQ(p.aggregates[0].nonnull_lane, 0);
}

TEST(LanePlan, TooManyAggregatesIsFeatureNotSupported) {
  GroupBySpec s;
  for (int c = 0; c < 8; ++c) {
    s.columns.push_back({ValueType::int64, true});
    s.aggregates.push_back({AggOp::sum, c});
  }
  try {
    plan_lanes(s);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::feature_not_supported);
  }
}

// Float and moment aggregates: their lanes, shared where the same sum serves
// several (avg and stddev of one column), and the pairs of moments2 over
// rows where both columns are non-NULL.
TEST(LanePlan, FloatAndMomentLanes) {
  GroupBySpec s;
  s.columns = {{ValueType::float64, true}, {ValueType::float32, true}, {ValueType::int32, true}};
  s.aggregates = {{AggOp::sum_float, 0}, {AggOp::moments_float, 0}, {AggOp::min_float, 1},
                  {AggOp::moments_int, 2}, {AggOp::moments2, 0, 2}};
  const LanePlan p = plan_lanes(s);
  const auto kind = [&](int lane) { return p.lanes[static_cast<size_t>(lane)].kind; };
  EXPECT_EQ(kind(p.aggregates[0].value_lane), LaneKind::fsum);
  EXPECT_EQ(p.aggregates[1].value_lane, p.aggregates[0].value_lane);  // one sum of x for both
  EXPECT_EQ(kind(p.aggregates[1].square_lane), LaneKind::fsq);
  EXPECT_EQ(kind(p.aggregates[2].value_lane), LaneKind::fmin);
  EXPECT_TRUE(p.lanes[static_cast<size_t>(p.aggregates[2].value_lane)].real);
  EXPECT_FALSE(p.lanes[static_cast<size_t>(p.aggregates[2].value_lane)].wide);  // float4
  EXPECT_EQ(kind(p.aggregates[3].value_lane), LaneKind::sum32);
  EXPECT_EQ(kind(p.aggregates[3].square_lane), LaneKind::sq_lo);
  EXPECT_EQ(kind(p.aggregates[3].square_hi_lane), LaneKind::sq_hi);
  const AggregateLanes& m2 = p.aggregates[4];
  EXPECT_EQ(kind(m2.nonnull_lane), LaneKind::pair_count);
  // Sx over X = column 2 (an int column read as double), paired with Y = column 0.
  const Lane& sx = p.lanes[static_cast<size_t>(m2.value_lane)];
  EXPECT_EQ(sx.kind, LaneKind::fsum);
  EXPECT_EQ(sx.column, 2);
  EXPECT_EQ(sx.column2, 0);
  EXPECT_FALSE(sx.real);
  EXPECT_NE(m2.value_lane, p.aggregates[0].value_lane);  // a pair's sum is not the column's sum
  EXPECT_EQ(kind(m2.xy_lane), LaneKind::fprod);
  EXPECT_EQ(kind(m2.yy_lane), LaneKind::fsq);
  EXPECT_EQ(p.lanes[static_cast<size_t>(m2.yy_lane)].column, 0);
  EXPECT_LE(p.lanes.size(), static_cast<size_t>(kMaxLanes));
}

TEST(LanePlan, MomentsOfWideIntegersAndIntegerOpsOverFloatsAreRefused) {
  GroupBySpec s;
  s.columns = {{ValueType::int64, true}, {ValueType::float64, true}};
  s.aggregates = {{AggOp::moments_int, 0}};
  EXPECT_THROW(plan_lanes(s), Error);
  s.aggregates = {{AggOp::sum, 1}};
  EXPECT_THROW(plan_lanes(s), Error);
  s.aggregates = {{AggOp::sum_float, 0}};
  EXPECT_THROW(plan_lanes(s), Error);
  s.aggregates = {{AggOp::count, 1}, {AggOp::moments2, 1, 0}};  // count of a float; pairs of any widths
  EXPECT_NO_THROW(plan_lanes(s));
}

TEST(LanePlan, MissingColumnIsAnError) {
  GroupBySpec s;
  s.aggregates = {{AggOp::sum, 3}};
  EXPECT_THROW(plan_lanes(s), Error);
}

}  // namespace
}  // namespace tally::gpu
