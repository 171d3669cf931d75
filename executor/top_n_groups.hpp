#pragma once
// Top-n per partition as an aggregation. `WHERE rn <= k` over
// `row_number() OVER (PARTITION BY p ORDER BY o)` keeps, of each partition,
// its k first values of o in that order. When the derived table's rows are
// nothing but p, o and the row numbers, those rows are exactly
// `SELECT p, count(*), count(o), nth_0(o), ..., nth_{k-1}(o) GROUP BY p`
// unfolded: the ordered_nth aggregates (aggregate_function.hpp) are the
// engines' ordered values with one pick each, so the GPU sorts the rows by
// (key, value) where its columns are resident and copies back k values per
// group, with no host work per row. Which of two rows with equal p and o
// gets which row number cannot be seen in such rows.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/operators/physical_operator.hpp"
#include "executor/select_plan.hpp"
#include "executor/window_call.hpp"

namespace tally::executor {

// The most ranks a partition keeps this way: one device pick per rank.
inline constexpr int64_t kMaxTopNGroupRanks = 16;

struct TopNGroups {
  // Over the table: the partition keys, count(*), count(o), then k ordered_nth(o).
  std::shared_ptr<const SelectPlan> plan;
  size_t keys = 0;
  int64_t k = 0;
  bool nulls_first = false;  // the window's NULL values of o rank first
  // The WHERE's `o IS NOT NULL` was left out of the plan: only count(o)'s
  // rows count, none of them NULL.
  bool values_only = false;
  // Per column of the window's child: the partition key it holds, or -1 for o.
  std::vector<int> child_source;
};

// The aggregation form of the top-n of window call `call` (bound `k`) in
// `select` (whose FROM is planned as `child`); nullopt when the shape does
// not allow it: a FROM other than one stored table, another ranking than
// row_number, an ORDER BY of more than one column, a PARTITION BY or ORDER BY
// that is not a bare column, or a column of the rows that is neither.
std::optional<TopNGroups> plan_top_n_groups(const nlohmann::json& select, const PlanContext& context,
                                            const PhysicalOperator& child, const WindowPlan& windows, size_t call,
                                            int64_t k);

// Whether a run should take the aggregation form: where the engines keep
// each key's k best values as the rows pass (k <= kMaxTopCodes: the GPU's
// top-codes table, the CPU's top-codes tables), or where the GPU engine is
// there to sort them. Otherwise the CPU's own top-n
// (top_n_per_partition.cpp) drops most rows with one probe each, which
// beats collecting and sorting all of them on the host.
bool top_n_groups_pays(const TopNGroups& groups, const ExecContext& context);

// The candidate rows: the child's columns, then one row number column per
// window call (`calls` of them, all row_number over the same window).
// `explain` (EXPLAIN ANALYZE) gets the aggregation's lines and the unfolding's time.
DataChunk run_top_n_groups(const TopNGroups& groups, ExecContext& context, size_t calls,
                           std::vector<std::string>* explain = nullptr);

}  // namespace tally::executor
