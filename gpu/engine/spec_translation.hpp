#pragma once
// Translation of the executor's aggregation spec into the GPU's GroupBySpec:
// what the GPU engine can run, and how.
#include <cstdint>
#include <optional>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "gpu/group_by_spec.hpp"

namespace tally::gpu {

// Bytes per value of a column of width `w`.
uint32_t width_bytes(tally::ColumnWidth w);

// The GroupBySpec for these widths and aggregates, or nullopt when the GPU
// engine cannot run them. `not_null[i]`: value column i has no NULLs.
std::optional<GroupBySpec> translate(tally::ColumnWidth key_width, const std::vector<tally::ColumnWidth>& value_widths,
                                     const std::vector<tally::PartialAggregate>& aggregates,
                                     const std::vector<uint8_t>& not_null);
// The same for an engine spec, with the planner's word on NULL keys.
std::optional<GroupBySpec> translate(const tally::AggregationSpec& s);

}  // namespace tally::gpu
