#pragma once
// The operator signature of a tuning key: the key's and values' widths and
// the aggregate list, as the tuning cache stores it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/aggregate_engine.hpp"

namespace tally::gpu {

// The operator signature of an engine spec when the planner gave none:
// "key=int4;values=int4,int8;aggs=count_rows,sum_int(0)" (aggregates sorted,
// so the select-list order does not matter).
std::string tuning_signature(const tally::AggregationSpec& spec);

// The widths and aggregates a tuning_signature() names (nullopt for a text
// this version does not write, e.g. a planner's own signature): what the
// engine needs to rehearse a cached query's shape before it comes.
struct SignatureShape {
  tally::ColumnWidth key_width = tally::ColumnWidth::int64;
  std::vector<tally::ColumnWidth> value_widths;
  std::vector<tally::PartialAggregate> aggregates;
};
std::optional<SignatureShape> parse_tuning_signature(std::string_view signature);

}  // namespace tally::gpu
