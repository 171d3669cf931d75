#pragma once
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

}  // namespace tally::executor
