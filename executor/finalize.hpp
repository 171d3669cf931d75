#pragma once
// PostgreSQL's final functions over aggregate partial states, in ONE place for
// every engine (CPU generic path, CPU hash engine, GPU engine): an engine
// produces partial states (count, sums, min/max, Youngs-Cramer moments) and
// these functions turn them into the exact values PostgreSQL 15 returns.
#include <cmath>
#include <cstdint>
#include <memory>
#include <functional>
#include <optional>

#include "common/aggregate_engine.hpp"
#include "common/float_moments.hpp"
#include "executor/aggregate_function.hpp"
#include "executor/numeric.hpp"
#include "executor/value.hpp"

namespace tally::executor {

using tally::FloatMoments;
using tally::FloatMoments2;

// avg(int2/int4/int8/numeric): sum / count with numeric_div's scale; NULL when count = 0.
Value finalize_avg_numeric(const Numeric& sum, int64_t count);
// avg of integers from an int64 sum and a count > 0: exactly
// finalize_avg_numeric's value (64-bit fast path, numeric_div otherwise).
Numeric avg_of_int64(int64_t sum, int64_t count);
// sum(int2/int4) -> bigint (22003 when it overflows), sum(int8) -> numeric.
Value finalize_sum_int(__int128 sum, int64_t count, bool result_is_numeric);
// var_samp/var_pop/stddev_samp/stddev_pop over integer or numeric inputs
// (numeric_stddev_internal): sum_x and sum_x2 exact.
Value finalize_numeric_variance(int64_t count, const Numeric& sum_x, const Numeric& sum_x2, bool sample,
                                bool stddev);
// The same over float inputs (float8_var_samp etc.).
Value finalize_float_variance(const FloatMoments& m, bool sample, bool stddev);
// avg(float4/float8).
Value finalize_float_avg(const FloatMoments& m);
enum class RegressionFinal { corr, covar_pop, covar_samp, r2, slope, intercept, sxx, syy, sxy, avgx, avgy };
Value finalize_regression(const FloatMoments2& m, RegressionFinal which);

// What finalize_column needs to know of one aggregate call.
struct ColumnFinal {
  AggKind kind = AggKind::count_star;
  TypeId input = TypeId::unknown;  // first argument's type (unknown for count(*))
  int32_t input_scale = 0;         // numeric(p <= 18, s) inputs: their scale (scaled int64 partial states)
};

// Runs body(begin, end) over contiguous ranges of [0, groups): on several
// cores when the column is large (each range of at least 2^17 groups, in
// blocks that each look at the statement's cancel first), else on the
// caller's thread. Writes into a result column from the ranges must touch
// only their own rows (a NULL map allocated before).
void for_group_ranges(size_t groups, const std::function<void(size_t begin, size_t end)>& body);

// A whole result column from an engine's partial states (aggregate_engine.hpp)
// without a Value per group: `out` (of the aggregate's result type) gets
// `groups` entries, exactly what the per-group functions above give.
// Throws what they throw (22003 for a bigint sum out of range).
void finalize_column(const ColumnFinal& call, const PartialStates& states, size_t groups, Vector& out);

// The same over an engine's compact result (AggregationSpec::compact_result):
// `count` is this aggregate's count array (AggregationResult::count_source:
// possibly another aggregate's), and integer sums may be in
// states.sum_int64. A column that is an array as it is (a count, integer
// min/max or sum(int2/int4) with no empty group) takes the array: `states`'s
// extreme_int / sum_int64, and `count` when count_movable (no later aggregate
// reads it), are left moved-from. count_has_zero: whether some group's count
// is 0, when the caller knows (else `count` is scanned).
// defer_avg: an avg of int2/int4 (int64 sums) becomes an AvgParts column
// (value.hpp) holding the sums and counts instead of Numerics; only for a
// column that goes to the client as it is (ExecContext::stream_to_client).
// shared_count: `count` held by shared_ptr (the caller's, `count` is *it);
// given only with defer_avg, it lets a count column (Vector::shared_ints) and
// a deferred avg (AvgParts::shared_count) share the array instead of copying
// it: several aggregates read one count (8M groups: 64 MB a copy).
void finalize_compact_column(const ColumnFinal& call, PartialStates& states, std::vector<int64_t>& count,
                             bool count_movable, size_t groups, Vector& out,
                             std::optional<bool> count_has_zero = std::nullopt, bool defer_avg = false,
                             std::shared_ptr<const std::vector<int64_t>> shared_count = nullptr);

// ---- ordered-set aggregates and count(DISTINCT) (finalize_ordered.cpp) ----
// PostgreSQL's orderedsetaggs.c, shared by the generic path's accumulator
// and the engines' ordered_values states.

// 22003 unless 0 <= fraction <= 1 (PostgreSQL checks it for every group,
// even one without rows, before it looks at the rows).
void check_percentile(double fraction);
// percentile_disc: the position, among n >= 1 sorted values, of the value it
// returns (ceil(fraction * n), at least the first).
size_t percentile_disc_position(double fraction, size_t n);
// percentile_cont over n >= 1 sorted values, value_at(i) the i-th in the
// aggregate's order: float8_lerp between the two rows around fraction * (n - 1).
template <class ValueAt>
double percentile_cont_of(double fraction, size_t n, ValueAt value_at) {
  const double position = fraction * static_cast<double>(n - 1);
  const double first_row = std::floor(position), second_row = std::ceil(position);
  const double lo = value_at(static_cast<size_t>(first_row));
  if (first_row == second_row) return lo;
  const double hi = value_at(static_cast<size_t>(second_row));
  return lo + (position - first_row) * (hi - lo);
}

// What an ordered-set aggregate's column needs beyond ColumnFinal.
struct OrderedFinal {
  ColumnFinal column;
  Value fraction;           // percentile_cont/disc: the direct argument (float8 or NULL)
  bool descending = false;  // WITHIN GROUP (ORDER BY ... DESC)
};

// percentile_cont, percentile_disc and mode from ordered_values states
// (offsets shorter than groups + 1: the groups past them have no value), and
// count(DISTINCT) from count_distinct states.
void finalize_ordered_column(const OrderedFinal& call, const PartialStates& states, size_t groups, Vector& out);

}  // namespace tally::executor
