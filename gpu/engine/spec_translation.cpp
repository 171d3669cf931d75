#include "gpu/engine/spec_translation.hpp"

#include "common/error.hpp"
#include "gpu/lane_plan.hpp"

namespace tally::gpu {
namespace {

using tally::AggregationSpec;
using tally::ColumnWidth;
using tally::PartialOp;

bool integer_width(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::int64; }

}  // namespace

uint32_t width_bytes(ColumnWidth w) { return w == ColumnWidth::int32 || w == ColumnWidth::float32 ? 4 : 8; }

std::optional<GroupBySpec> translate(ColumnWidth key_width, const std::vector<ColumnWidth>& value_widths,
                                     const std::vector<tally::PartialAggregate>& aggregates,
                                     const std::vector<uint8_t>& not_null) {
  if (!integer_width(key_width)) return std::nullopt;
  GroupBySpec g;
  g.key_type = key_width == ColumnWidth::int32 ? KeyType::int32 : KeyType::int64;
  for (size_t i = 0; i < value_widths.size(); ++i) {
    const ColumnWidth w = value_widths[i];
    if (!integer_width(w)) return std::nullopt;
    const bool may_have_nulls = !(i < not_null.size() && not_null[i]);
    g.columns.push_back({w == ColumnWidth::int32 ? ValueType::int32 : ValueType::int64, may_have_nulls});
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
      default: return std::nullopt;
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
