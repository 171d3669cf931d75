#pragma once
// Rewrites of a plan's sums into an expression over sums and hidden counts
// that an engine runs without a per-row expression.
//
// sum(CASE WHEN c THEN x ELSE 0 END), x a numeric of one scale s > 0 (TPC-H
// Q8's and Q14's shares, and pivots BI tools write): its values have scale
// s on some rows and 0 on others, so no engine could hold it as integers of
// one scale, and the query ran on the row-by-row generic path. PostgreSQL's
// sum takes the largest scale of the values it adds, and the zeros add
// nothing: the sum is that of the CASE with 0 written at scale s, shown at
// scale 0 where no row took an x (it is then 0). The plan sums the CASE
// with 0.000... and counts the rows that took an x (a hidden count of the
// CASE with NULL for 0); each reference to the sum becomes
// CASE WHEN count > 0 THEN sum ELSE round(sum) END.
#include "executor/binder.hpp"

namespace tally::executor {

struct SelectPlan;

// Rewrites the plan's sums of that form (a plain GROUP BY or aggregate:
// none with grouping sets, grouping() or windows).
void scale_zero_branch_sums(SelectPlan& plan, const BindContext& base);

// sum(x + c), sum(c + x), sum(x - c) over integers (ClickBench's
// SUM(ResolutionWidth + 1) ... + 89, and dashboards' offsets): the sum is
// sum(x) + c * count(x), which needs no per-row addition, and every such
// sum of one x shares one sum(x) and one count(x). Only where x + c cannot
// overflow the addition's type for any x of x's type, so that no error a
// row would raise is lost. Same plans as scale_zero_branch_sums.
void split_constant_offset_sums(SelectPlan& plan, const BindContext& base);

// Both rewrites above, in that order.
inline void rewrite_sums(SelectPlan& plan, const BindContext& base) {
  scale_zero_branch_sums(plan, base);
  split_constant_offset_sums(plan, base);
}

}  // namespace tally::executor
