#pragma once
// Magic sets for decorrelated subqueries (subquery_decorrelation.hpp): a
// correlated aggregate planned as one GROUP BY over its correlation keys
// reads every group's rows, though only the groups of the outer rows are
// ever looked up. Where an operator knows those outer values before it
// evaluates the subquery, it restricts the grouped run to them
// (SubqueryExpr::restrict_groups): the aggregate then reads the rows of
// those groups only. The answers do not depend on it: a lookup of a key
// outside the restriction runs the whole grouped run.
#include <vector>

#include "executor/expression.hpp"
#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

struct ExecContext;

// A hash join's residual (TPC-H Q2's and Q17's subquery): outer values that
// are columns of the held side take only the held rows' values.
void restrict_by_held_rows(const std::vector<ExprPtr>& residual, const PhysicalOperator& held,
                           const DataChunk& rows, size_t space_width, const ExecContext& context);

// An inner or semi hash join over a scan (TPC-H Q20's partsupp, semi-joined
// with the parts named 'forest%'): a correlation key of a subquery in the
// scan's filters that is also one of the join's probe keys takes only the
// held side's values of that key. The scan tests the join's keys before
// such a filter (TableScan::filtered_chunk), so no row the join drops looks
// its group up.
void restrict_by_join_keys(const std::vector<ExprPtr>& scan_filters, const std::vector<ExprPtr>& probe_keys,
                           const std::vector<Vector>& held_keys, const std::vector<Value>* parameters);

// A scan's conjuncts (TPC-H Q20's partsupp): a correlation key that another
// conjunct tests with `key IN (uncorrelated subquery)` takes only that
// subquery's values.
void restrict_by_in_lists(const std::vector<ExprPtr>& conjuncts, const std::vector<Value>* parameters);

}  // namespace tally::executor
