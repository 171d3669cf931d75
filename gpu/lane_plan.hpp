#pragma once
// How aggregates map onto accumulators ("lanes"). Several aggregates share a
// lane (count(v) and sum(v) share v's non-NULL count); avg is sum + count.
// Global-table lanes are 64-bit; shared-memory lanes are 32-bit words flushed
// into them, because 64-bit shared-memory atomicAdd is a CAS loop on sm_90.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/group_by_spec.hpp"

namespace tally::gpu {

enum class LaneKind : uint8_t {
  count_rows,   // rows per group (lane 0, always present: a group exists iff > 0)
  count_valid,  // non-NULL values of a column
  sum32,        // sum of an int32 column (int64 two's complement)
  sum_lo,       // sum of the low 32 bits (unsigned) of an int64 column
  sum_hi,       // sum of the high 32 bits (signed) of an int64 column
  min,
  max,
  // Exact sum of squares of an int32 column (x^2 < 2^62): its low and high
  // 32-bit words summed apart, like sum_lo/sum_hi of an int64 column.
  sq_lo,
  sq_hi,
  // Float lanes (kinds from fmin on): the input read as a double (a float
  // column's bits, or an integer column converted), kept as a double in the
  // lane's 64 bits, except fmin/fmax (PostgreSQL's float order mapped onto
  // int64 order: NaN greatest, -0 = 0). With column2 >= 0 a row counts only
  // where column2 is non-NULL too (moments2's pairs).
  fmin,
  fmax,
  fsum,        // sum of x
  fsq,         // sum of x * x
  fprod,       // sum of x * y (y = column2)
  pair_count,  // rows where both column and column2 are non-NULL
};

// Whether the lane is one of the float kinds (is read by float_lane_row).
inline constexpr bool is_float_lane(LaneKind k) { return k >= LaneKind::fmin; }

struct Lane {
  LaneKind kind = LaneKind::count_rows;
  int column = -1;
  bool wide = false;  // the column is 64 bits wide (int64 or float64)
  int column2 = -1;   // float lanes: the second column of a pair
  bool real = false;   // column holds floats (float32 or float64 by `wide`)
  bool wide2 = false;  // the same of column2
  bool real2 = false;
};

struct AggregateLanes {
  int nonnull_lane = 0;  // lane holding the non-NULL input count
  int value_lane = -1;   // count/sum32/sum_lo/min/max lane (-1 for counts); the x sum of floats and moments
  int value_hi_lane = -1;  // sum_hi for int64 sums
  // moments_int: the sum of squares' sq_lo and sq_hi; moments_float: fsq in
  // square_lane; moments2: Sx in value_lane, then these.
  int square_lane = -1, square_hi_lane = -1;
  int y_lane = -1, yy_lane = -1, xy_lane = -1;
};

inline constexpr int kMaxLanes = 16;
inline constexpr int kMaxColumns = 8;

struct LanePlan {
  std::vector<Lane> lanes;
  std::vector<AggregateLanes> aggregates;
  // Shared-memory bytes per slot for the lanes (keys not included).
  size_t shared_bytes_per_slot() const;
};

// Throws Error(0A000) for aggregates the GPU engine cannot compute.
LanePlan plan_lanes(const GroupBySpec& spec);

// Shared-memory bytes of one lane per slot.
size_t shared_lane_bytes(const Lane& lane);

}  // namespace tally::gpu
