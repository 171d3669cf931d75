#include "gpu/lane_plan.hpp"

#include <string>

#include "common/error.hpp"

namespace tally::gpu {

size_t shared_lane_bytes(const Lane& lane) {
  switch (lane.kind) {
    case LaneKind::count_rows:
    case LaneKind::count_valid: return 4;
    case LaneKind::sum32:
    case LaneKind::sum_lo:
    case LaneKind::sum_hi: return 8;  // low word with carry detection + signed high adjustment
    case LaneKind::min:
    case LaneKind::max: return lane.wide ? 8 : 4;
  }
  return 8;
}

size_t LanePlan::shared_bytes_per_slot() const {
  size_t bytes = 0;
  for (const Lane& l : lanes) bytes += shared_lane_bytes(l);
  return bytes;
}

namespace {
int find_or_add(LanePlan& plan, LaneKind kind, int column, bool wide) {
  for (size_t i = 0; i < plan.lanes.size(); ++i)
    if (plan.lanes[i].kind == kind && plan.lanes[i].column == column) return static_cast<int>(i);
  if (plan.lanes.size() >= static_cast<size_t>(kMaxLanes))
    throw Error(SqlState::feature_not_supported,
                "GPU: too many distinct aggregates in one GROUP BY (at most " + std::to_string(kMaxLanes) +
                    " accumulators)");
  plan.lanes.push_back(Lane{kind, column, wide});
  return static_cast<int>(plan.lanes.size() - 1);
}
}  // namespace

LanePlan plan_lanes(const GroupBySpec& spec) {
  if (spec.columns.size() > static_cast<size_t>(kMaxColumns))
    throw Error(SqlState::feature_not_supported,
                "GPU: at most " + std::to_string(kMaxColumns) + " aggregated columns per GROUP BY");
  LanePlan plan;
  plan.lanes.push_back(Lane{LaneKind::count_rows, -1, false});
  for (const AggregateSpec& a : spec.aggregates) {
    AggregateLanes al;
    if (a.op == AggOp::count_star) {
      plan.aggregates.push_back(al);
      continue;
    }
    if (a.column < 0 || static_cast<size_t>(a.column) >= spec.columns.size())
      throw Error(SqlState::internal_error, "GPU: aggregate refers to a missing column");
    const ValueColumnSpec& col = spec.columns[static_cast<size_t>(a.column)];
    const bool wide = col.type == ValueType::int64;
    al.nonnull_lane = col.may_have_nulls ? find_or_add(plan, LaneKind::count_valid, a.column, wide) : 0;
    switch (a.op) {
      case AggOp::count: break;
      case AggOp::sum:
      case AggOp::avg:
        if (wide) {
          al.value_lane = find_or_add(plan, LaneKind::sum_lo, a.column, wide);
          al.value_hi_lane = find_or_add(plan, LaneKind::sum_hi, a.column, wide);
        } else {
          al.value_lane = find_or_add(plan, LaneKind::sum32, a.column, wide);
        }
        break;
      case AggOp::min: al.value_lane = find_or_add(plan, LaneKind::min, a.column, wide); break;
      case AggOp::max: al.value_lane = find_or_add(plan, LaneKind::max, a.column, wide); break;
      case AggOp::count_star: break;
    }
    plan.aggregates.push_back(al);
  }
  return plan;
}

}  // namespace tally::gpu
