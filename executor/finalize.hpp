#pragma once
// PostgreSQL's final functions over aggregate partial states, in ONE place for
// every engine (CPU generic path, CPU hash engine, GPU engine): an engine
// produces partial states (count, sums, min/max, Youngs-Cramer moments) and
// these functions turn them into the exact values PostgreSQL 15 returns.
#include <cstdint>
#include <memory>
#include <optional>

#include "common/aggregate_engine.hpp"
#include "executor/aggregate_function.hpp"
#include "executor/numeric.hpp"
#include "executor/value.hpp"

namespace tally::executor {

// Youngs-Cramer moments of float8 inputs (float8_accum / float8_regr_accum).
struct FloatMoments {
  double n = 0, sx = 0, sxx = 0;
  void add(double x);
  void combine(const FloatMoments& other);
};
struct FloatMoments2 {
  double n = 0, sx = 0, sxx = 0, sy = 0, syy = 0, sxy = 0;
  void add(double y, double x);  // PostgreSQL's argument order: (Y, X)
  void combine(const FloatMoments2& other);
};

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

}  // namespace tally::executor
