#include "gpu/engine/spec_translation.hpp"

#include "common/error.hpp"
#include "gpu/lane_plan.hpp"

namespace tally::gpu {
namespace {

using tally::AggregationSpec;
using tally::ColumnWidth;
using tally::PartialOp;

bool integer_width(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::int64; }

ValueType value_type(ColumnWidth w) {
  switch (w) {
    case ColumnWidth::int32: return ValueType::int32;
    case ColumnWidth::int64: return ValueType::int64;
    case ColumnWidth::float32: return ValueType::float32;
    case ColumnWidth::float64: return ValueType::float64;
  }
  return ValueType::int64;
}

}  // namespace

uint32_t width_bytes(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::float32 ? 4 : 8; }

std::optional<GroupBySpec> translate(ColumnWidth key_width, const std::vector<ColumnWidth>& value_widths,
                                     const std::vector<tally::PartialAggregate>& aggregates,
                                     const std::vector<uint8_t>& not_null) {
  if (!integer_width(key_width)) return std::nullopt;
  GroupBySpec g;
  g.key_type = key_width == ColumnWidth::int32 ? KeyType::int32 : KeyType::int64;
  for (size_t i = 0; i < value_widths.size(); ++i) {
    const bool may_have_nulls = !(i < not_null.size() && not_null[i]);
    g.columns.push_back({value_type(value_widths[i]), may_have_nulls});
  }
  for (const tally::PartialAggregate& a : aggregates) {
    AggregateSpec as;
    as.column = a.input;
    switch (a.op) {
      case PartialOp::count_rows: as.op = AggOp::count_star; as.column = -1; break;
      case PartialOp::count_valid: as.op = AggOp::count; break;
      case PartialOp::sum_int: as.op = AggOp::sum; break;
      case PartialOp::min_int: as.op = AggOp::min; break;
      case PartialOp::max_int: as.op = AggOp::max; break;
      case PartialOp::sum_float: as.op = AggOp::sum_float; break;
      case PartialOp::min_float: as.op = AggOp::min_float; break;
      case PartialOp::max_float: as.op = AggOp::max_float; break;
      case PartialOp::moments_int: as.op = AggOp::moments_int; break;
      case PartialOp::moments_float: as.op = AggOp::moments_float; break;
      case PartialOp::moments2_float:
        as.op = AggOp::moments2;
        as.column2 = a.input2;
        if (as.column2 < 0 || static_cast<size_t>(as.column2) >= g.columns.size()) return std::nullopt;
        break;
      case PartialOp::ordered_values:
      case PartialOp::count_distinct:
        // Not a hash-table lane: the executor sorts these per group beside
        // the run (executor/cpu/ordered_values_run.hpp) and never hands them over.
        return std::nullopt;
    }
    if (as.op != AggOp::count_star && (as.column < 0 || static_cast<size_t>(as.column) >= g.columns.size()))
      return std::nullopt;
    g.aggregates.push_back(as);
  }
  if (g.columns.size() > static_cast<size_t>(kMaxColumns)) return std::nullopt;
  try {
    (void)plan_lanes(g);
  } catch (const Error&) {
    return std::nullopt;
  }
  return g;
}

std::optional<GroupBySpec> translate(const AggregationSpec& s) {
  std::optional<GroupBySpec> g = translate(s.key_width, s.value_widths, s.aggregates, s.value_not_null);
  // The planner's word on NULL keys (chunk statistics; unknown stays unknown):
  // variant_rules.cpp keeps a nullable-key count+sum off the count+sum kernel.
  if (g) g->key_may_have_nulls = s.key_has_nulls;
  return g;
}

}  // namespace tally::gpu
