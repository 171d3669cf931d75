#pragma once
// One aggregate of the GPU's result (GroupByResult) as the seam's partial
// states (common/aggregate_engine.hpp), which executor/finalize.* turns into
// PostgreSQL's values. The kernels keep float moments as plain sums (count,
// sum, sum of squares, sum of products: atomics can add them in any order);
// here they become the Youngs-Cramer form (n, Sx, Sxx[, Sy, Syy, Sxy]) that
// float8_accum and float8_regr_accum keep, with PostgreSQL's NaN rules.
#include "common/aggregate_engine.hpp"
#include "gpu/group_by_spec.hpp"

namespace tally::gpu {

// Moves `values`' arrays into `out` for the seam operation `op`.
void to_partial_states(tally::PartialOp op, AggregateValues& values, tally::PartialStates& out);

// The centred sum of squares (or products) of n pairs from plain sums:
// sum_ab - sum_a * sum_b / n. NaN when an input was not finite (PostgreSQL
// makes Sxx, Syy and Sxy NaN once an input is infinite or NaN), 0 for no
// input; a square's rounding below 0 or within the sums' rounding of 0
// (a constant group, exactly 0 in PostgreSQL) is 0.
double centred_sum(double n, double sum_a, double sum_b, double sum_ab, bool square);

}  // namespace tally::gpu
