#pragma once
// What a GPU GROUP BY computes: one key column, value columns, and the
// aggregates over them. Host-only; shared by the launcher, the engine and tests.
#include <cstdint>
#include <optional>
#include <vector>

namespace tally::gpu {

// Physical key/value widths. SQL types map onto these: int2/int4/date/dictionary
// text codes -> int32 (int2 and bool widened by the caller), int8/timestamp -> int64,
// float4 -> float32, float8 -> float64 (values only).
enum class KeyType { int32, int64 };
enum class ValueType { int32, int64, float32, float64 };

inline bool is_float_value(ValueType t) { return t == ValueType::float32 || t == ValueType::float64; }
// Bytes per value as the chunk holds it.
inline int value_bytes(ValueType t) { return t == ValueType::int64 || t == ValueType::float64 ? 8 : 4; }

enum class AggOp {
  count_star,  // count(*): rows per group
  count,       // count(v): non-NULL values per group
  sum,         // exact: int32 values -> int64 total, int64 values -> 128-bit total
  min,
  max,
  avg,         // sum + count; the shared finalization layer renders it
  // Over float columns (float32 widened to double in the kernel).
  sum_float,   // double sum + count
  min_float,   // PostgreSQL's float order: NaN greatest, -0 = 0
  max_float,
  // Over int32 columns: exact count, sum and sum of squares (var/stddev of int2/int4).
  moments_int,
  // count, sum and sum of squares in double of a float column (var/stddev/avg of floats).
  moments_float,
  // Pairs (Y = column, X = column2) where both are non-NULL, either width read as
  // double: count, Sx, Sxx, Sy, Syy, Sxy as plain sums (corr, covar, regr_*).
  moments2,
};

struct AggregateSpec {
  AggOp op = AggOp::count_star;
  int column = -1;   // index into GroupBySpec::columns; -1 for count(*)
  int column2 = -1;  // moments2: the X column
};

struct ValueColumnSpec {
  ValueType type = ValueType::int32;
  // False when the catalog guarantees no NULLs (NOT NULL, or null count 0 in
  // every chunk): count(v) then shares count(*)'s accumulator.
  bool may_have_nulls = true;
};

struct GroupBySpec {
  KeyType key_type = KeyType::int32;
  // Whether the key column may hold NULLs, when the caller knows (catalog
  // statistics): with NULL keys the launcher runs the generic kernels, never
  // the count+sum ones, and the rules must configure for what runs
  // (variant_rules.cpp). Unknown: the rules assume no NULL key, the common case.
  std::optional<bool> key_may_have_nulls;
  std::vector<ValueColumnSpec> columns;
  std::vector<AggregateSpec> aggregates;
  // The caller reads the compact result form (AggregationSpec::compact_result):
  // a sum held by one 64-bit lane comes back as int64 (AggregateValues::value64),
  // and aggregates counting every row of their group share one count array
  // (GroupByResult::count_source).
  bool compact_result = false;
};

// Key range of a chunk, from catalog statistics or measured on the device.
struct KeyRange {
  int64_t min = 0;
  int64_t max = -1;  // max < min: no non-NULL key
  // Number of values in [min, max]; saturates at UINT64_MAX for the full int8 range.
  uint64_t size() const {
    if (max < min) return 0;
    const uint64_t span = static_cast<uint64_t>(max) - static_cast<uint64_t>(min);
    return span == UINT64_MAX ? UINT64_MAX : span + 1;
  }
};

// One column of a chunk: `data` holds rows values of the column's width;
// validity is one byte per row (1 = non-NULL) or null when no row is NULL.
struct ColumnPointer {
  const void* data = nullptr;
  const uint8_t* validity = nullptr;
};

// A chunk to aggregate. Pointers are device pointers for consume(), host
// pointers for consume_host(). The chunk is not retained after the call.
struct ChunkPointers {
  int64_t rows = 0;
  ColumnPointer key;
  std::vector<ColumnPointer> values;    // one per GroupBySpec::columns
  std::optional<KeyRange> key_range;    // when known; else measured if a variant needs it
};

// Per group, per aggregate, only the arrays its partial state needs (each
// is one the engine's partial states take as it is, with no copy for the
// host to build and throw away): `nonnull` is the
// number of non-NULL inputs (for count(*): the rows), which is also the
// value of count and count(*); `value` the exact sum of sum and avg;
// `extreme` the min or max. SQL NULL results (sum/min/max/avg of no value)
// have nonnull == 0. value_at() reads whichever array holds the value (a
// count's in the full form only).
// Float and moment aggregates fill further arrays: `real` the double sum
// (sum_float, moments_float) or the min/max (min_float, max_float);
// `value2` the exact sum of squares (moments_int, with `value` the sum);
// `squares` the double sum of squares (moments_float); and for moments2 the
// plain sums over the pairs: `sum_x`, `sum_xx`, `sum_y`, `sum_yy`, `sum_xy`.
// The host turns plain sums into the Youngs-Cramer form the engines share.
struct AggregateValues {
  AggOp op = AggOp::count_star;
  std::vector<__int128> value;    // sum, avg
  // Compact form: instead of `value`, the sums of an int2/int4 input as its
  // one 64-bit lane holds them (int64 two's complement, as exact as `value`).
  std::vector<int64_t> value64;
  std::vector<int64_t> extreme;   // min, max
  std::vector<int64_t> nonnull;   // every aggregate
  std::vector<double> real;       // sum_float, moments_float (sum); min_float, max_float
  std::vector<__int128> value2;   // moments_int: sum of squares
  std::vector<double> squares;    // moments_float: sum of squares
  std::vector<double> sum_x, sum_xx, sum_y, sum_yy, sum_xy;  // moments2
  __int128 value_at(size_t g) const {
    switch (op) {
      case AggOp::count_star:
      case AggOp::count: return nonnull[g];
      case AggOp::min:
      case AggOp::max: return extreme[g];
      case AggOp::sum:
      case AggOp::avg:
      case AggOp::moments_int: break;
      default: return 0;  // float aggregates: read `real` and the sums
    }
    return value64.empty() ? value[g] : __int128{value64[g]};
  }
};

struct GroupByResult {
  std::vector<int64_t> keys;          // widened to int64
  std::vector<uint8_t> key_is_null;   // 1 for the NULL group
  std::vector<AggregateValues> aggregates;  // one per GroupBySpec::aggregates
  // Compact form (GroupBySpec::compact_result), else empty: per aggregate,
  // the aggregate whose `nonnull` holds its count (itself, or an earlier one
  // whose count lane counts every row of a group, as this one's does; its
  // own `nonnull` is then empty), as AggregationResult::count_source.
  std::vector<int> count_source;
  // Groups finish() left out because a group test rejected them
  // (GroupByAggregator::keep_groups_where).
  uint64_t dropped = 0;
  // Where the groups' keys also are in device memory, in this result's order
  // (the regions one after the other), until the aggregator runs again:
  // key tuple ids are turned into their column values there without
  // copying them back up. Empty where the host reordered the groups (group
  // tests run on the host).
  struct DeviceKeys {
    const int64_t* keys = nullptr;
    uint64_t count = 0;
  };
  std::vector<DeviceKeys> device_keys;
  size_t groups() const { return keys.size(); }
};

}  // namespace tally::gpu
