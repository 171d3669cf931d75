#pragma once
// The aggregation of a GROUP BY with grouping sets: one GroupAggregator per
// set (each an engine run, so the GPU or the CPU engine takes each set as it
// takes any GROUP BY), all fed the same chunks; finalize concatenates their
// groups into the plan's layout [keys..., aggregates..., grouping() calls...],
// with NULL for the keys a set lacks.
#include <memory>
#include <vector>

#include "executor/group_aggregator.hpp"

namespace tally::executor {

struct SelectPlan;

std::unique_ptr<GroupAggregator> make_grouping_sets_aggregator(const SelectPlan& plan, const ExecContext& context,
                                                               const TableSnapshot* table);

}  // namespace tally::executor
