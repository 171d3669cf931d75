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

TEST(LanePlan, MissingColumnIsAnError) {
  GroupBySpec s;
  s.aggregates = {{AggOp::sum, 3}};
  EXPECT_THROW(plan_lanes(s), Error);
}

}  // namespace
}  // namespace tally::gpu
