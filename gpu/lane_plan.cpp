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
    case LaneKind::sum_hi:
    case LaneKind::sq_lo:
    case LaneKind::sq_hi: return 8;  // low word with carry detection + signed high adjustment
    case LaneKind::min:
    case LaneKind::max: return lane.wide ? 8 : 4;
    case LaneKind::pair_count: return 4;
    case LaneKind::fmin:
    case LaneKind::fmax:
    case LaneKind::fsum:
    case LaneKind::fsq:
    case LaneKind::fprod: return 8;  // one double (or ordered int64) per slot
  }
  return 8;
}

size_t LanePlan::shared_bytes_per_slot() const {
  size_t bytes = 0;
  for (const Lane& l : lanes) bytes += shared_lane_bytes(l);
  return bytes;
}

namespace {
int add_lane(LanePlan& plan, const Lane& lane) {
  for (size_t i = 0; i < plan.lanes.size(); ++i)
    if (plan.lanes[i].kind == lane.kind && plan.lanes[i].column == lane.column &&
        plan.lanes[i].column2 == lane.column2)
      return static_cast<int>(i);
  if (plan.lanes.size() >= static_cast<size_t>(kMaxLanes))
    throw Error(SqlState::feature_not_supported,
                "GPU: too many distinct aggregates in one GROUP BY (at most " + std::to_string(kMaxLanes) +
                    " accumulators)");
  plan.lanes.push_back(lane);
  return static_cast<int>(plan.lanes.size() - 1);
}

int find_or_add(LanePlan& plan, LaneKind kind, int column, bool wide) {
  Lane lane;
  lane.kind = kind;
  lane.column = column;
  lane.wide = wide;
  return add_lane(plan, lane);
}

// A float lane over `column` (and `column2` for a pair; -1 for none).
int float_lane(LanePlan& plan, const GroupBySpec& spec, LaneKind kind, int column, int column2) {
  Lane lane;
  lane.kind = kind;
  lane.column = column;
  const ValueType t = spec.columns[static_cast<size_t>(column)].type;
  lane.wide = value_bytes(t) == 8;
  lane.real = is_float_value(t);
  if (column2 >= 0) {
    const ValueType t2 = spec.columns[static_cast<size_t>(column2)].type;
    lane.column2 = column2;
    lane.wide2 = value_bytes(t2) == 8;
    lane.real2 = is_float_value(t2);
  }
  return add_lane(plan, lane);
}

void refuse(const std::string& what) { throw Error(SqlState::feature_not_supported, "GPU: " + what); }

// The lanes of the float and moment aggregates.
void plan_float_lanes(LanePlan& plan, const GroupBySpec& spec, const AggregateSpec& a, AggregateLanes& al) {
  const ValueColumnSpec& col = spec.columns[static_cast<size_t>(a.column)];
  const int c = a.column;
  switch (a.op) {
    case AggOp::sum_float:
    case AggOp::min_float:
    case AggOp::max_float:
      if (!is_float_value(col.type)) refuse("a float aggregate over an integer column");
      al.value_lane = float_lane(plan, spec,
                                 a.op == AggOp::sum_float   ? LaneKind::fsum
                                 : a.op == AggOp::min_float ? LaneKind::fmin
                                                            : LaneKind::fmax,
                                 c, -1);
      break;
    case AggOp::moments_float:
      al.value_lane = float_lane(plan, spec, LaneKind::fsum, c, -1);
      al.square_lane = float_lane(plan, spec, LaneKind::fsq, c, -1);
      break;
    case AggOp::moments_int:
      if (col.type != ValueType::int32) refuse("exact moments over a column wider than int4");
      al.value_lane = find_or_add(plan, LaneKind::sum32, c, false);
      al.square_lane = find_or_add(plan, LaneKind::sq_lo, c, false);
      al.square_hi_lane = find_or_add(plan, LaneKind::sq_hi, c, false);
      break;
    case AggOp::moments2: {
      // Y = column, X = column2; every sum only over rows where both are non-NULL.
      const int x = a.column2;
      if (x < 0 || static_cast<size_t>(x) >= spec.columns.size())
        throw Error(SqlState::internal_error, "GPU: aggregate refers to a missing column");
      // Both columns free of NULLs: every row is a pair, counted by lane 0.
      const bool pairs_may_be_null = col.may_have_nulls || spec.columns[static_cast<size_t>(x)].may_have_nulls;
      al.nonnull_lane = pairs_may_be_null ? float_lane(plan, spec, LaneKind::pair_count, c, x) : 0;
      al.value_lane = float_lane(plan, spec, LaneKind::fsum, x, c);
      al.square_lane = float_lane(plan, spec, LaneKind::fsq, x, c);
      al.y_lane = float_lane(plan, spec, LaneKind::fsum, c, x);
      al.yy_lane = float_lane(plan, spec, LaneKind::fsq, c, x);
      al.xy_lane = float_lane(plan, spec, LaneKind::fprod, c, x);
      break;
    }
    default: break;
  }
}

bool is_float_op(AggOp op) {
  return op == AggOp::sum_float || op == AggOp::min_float || op == AggOp::max_float || op == AggOp::moments_int ||
         op == AggOp::moments_float || op == AggOp::moments2;
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
    const bool wide = value_bytes(col.type) == 8;
    // moments2 counts its pairs in a lane of its own.
    if (a.op != AggOp::moments2)
      al.nonnull_lane = col.may_have_nulls ? find_or_add(plan, LaneKind::count_valid, a.column, wide) : 0;
    if (is_float_op(a.op)) {
      plan_float_lanes(plan, spec, a, al);
      plan.aggregates.push_back(al);
      continue;
    }
    if (is_float_value(col.type) && a.op != AggOp::count)
      refuse("integer sum/min/max over a float column");
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
      default: break;
    }
    plan.aggregates.push_back(al);
  }
  return plan;
}

}  // namespace tally::gpu
