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
};

struct Lane {
  LaneKind kind = LaneKind::count_rows;
  int column = -1;
  bool wide = false;  // the column is int64
};

struct AggregateLanes {
  int nonnull_lane = 0;  // lane holding the non-NULL input count
  int value_lane = -1;   // count/sum32/sum_lo/min/max lane (-1 for counts)
  int value_hi_lane = -1;  // sum_hi for int64 sums
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
