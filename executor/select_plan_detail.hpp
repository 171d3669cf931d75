#pragma once
// The SelectPlan itself (select_plan.hpp hands it out opaque): for the planner.
#include <memory>
#include <string>
#include <vector>

#include "executor/expression.hpp"
#include "executor/group_aggregator.hpp"
#include "executor/window_call.hpp"

namespace tally::executor {

class TableSnapshot;
class PhysicalOperator;
class SubqueryExpr;
class SharedCte;

struct LookupForm;

struct SortKey {
  int column = 0;  // index into outputs
  bool descending = false;
  bool nulls_first = false;
};

struct SelectPlan {
  std::shared_ptr<const TableSnapshot> table;  // null: one row without columns
  std::vector<int> scan_columns;               // table columns the query reads
  ExprPtr where;
  bool aggregate = false;
  std::vector<ExprPtr> group_keys;  // over the scan
  std::vector<AggregateCall> aggregates;
  ExprPtr having;                   // over [keys..., aggregates..., grouping() calls...]
  // GROUPING SETS / ROLLUP / CUBE: the aggregation runs once per set, over
  // that set's keys (its own expressions, bound like group_keys), and the
  // results are concatenated with NULL for the keys a set lacks. Empty for
  // a plain GROUP BY.
  struct GroupingSet {
    std::vector<int> keys;  // indexes into group_keys
    std::vector<ExprPtr> key_exprs;
  };
  std::vector<GroupingSet> grouping_sets;
  // Each grouping() call's arguments as key indexes; its value, per set, is
  // a bit per argument (the last argument the lowest), set when the set lacks it.
  std::vector<std::vector<int>> grouping_calls;
  std::vector<ExprPtr> outputs;     // visible columns then hidden sort columns
  size_t visible = 0;
  std::vector<std::string> names;
  bool distinct = false;
  // DISTINCT ON: the output columns (visible or hidden) whose first row, in
  // ORDER BY's order, each distinct combination keeps.
  std::vector<int> distinct_on;
  std::vector<SortKey> sort;
  ExprPtr limit, offset;
  // Joins, derived tables, WITH, subqueries: the FROM clause (and WHERE) as
  // an operator tree whose columns sit in a column space of source_width
  // columns, which every expression above is bound against. Null for a
  // stored table (`table`) or no FROM.
  std::shared_ptr<const PhysicalOperator> source;
  size_t source_width = 0;
  // Window calls evaluated over the groups (after HAVING) or, without FROM,
  // over the one row; null when there are none or the operator tree (a
  // WindowOperator) evaluates them. Their results follow the columns they run over.
  std::shared_ptr<const WindowPlan> windows;
  // The subquery expressions this plan holds: their caches are reset when it runs.
  std::vector<const SubqueryExpr*> subqueries;
  // Its WITH queries that run once for all their references: their rows
  // are forgotten when it runs.
  std::vector<std::shared_ptr<const SharedCte>> shared_ctes;
  // An aggregate over a star join: the same query as one table's aggregate
  // that looks its joined relations up by key (lookup_rewrite.hpp), tried
  // first; null where the plan has no such form.
  std::shared_ptr<const LookupForm> lookup_form;
  // The statement as written where this plan is its distinct-count rewrite
  // (distinct_count_rewrite.hpp): each count(DISTINCT) kept beside one
  // grouping, whose rows the GPU engine sorts and counts on the device. Run
  // instead where the GPU engine takes aggregates (the rewrite's inner
  // grouping would bring every (key, value) group back to the host); null
  // where the plan is no such rewrite.
  std::shared_ptr<const SelectPlan> distinct_rows_form;
};

}  // namespace tally::executor
