#pragma once
// The layout of a block's shared-memory table (shared-memory, dense,
// dictionary and partitioned variants): 8-byte arrays first for alignment.
#include <cstdint>

#include "gpu/aggregator/kernels/shared_table.cuh"
#include "gpu/lane_plan.hpp"

namespace tally::gpu::aggregator {

// Lanes of 8-byte words (wide min/max, the float lanes but pair_count): laid
// out first, so each is 8-byte aligned.
inline bool eight_byte_lane(const Lane& lane) {
  if (lane.kind == LaneKind::min || lane.kind == LaneKind::max) return lane.wide;
  return is_float_lane(lane.kind) && lane.kind != LaneKind::pair_count;
}

template <class K>
kernels::SharedLayout shared_layout(const LanePlan& plan, uint32_t slots, uint32_t replicas,
                                    bool with_keys) {
  kernels::SharedLayout lay{};
  const uint32_t total = (slots + 2) * replicas;
  uint32_t off = 0;
  if (with_keys && sizeof(K) == 8) {
    lay.keys_offset = off;
    off += total * 8;
  }
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    const Lane& lane = plan.lanes[l];
    if (eight_byte_lane(lane)) {
      lay.offset[l] = off;
      off += total * 8;
    }
  }
  for (size_t l = 0; l < plan.lanes.size(); ++l) {
    const Lane& lane = plan.lanes[l];
    if (eight_byte_lane(lane)) continue;
    lay.offset[l] = off;
    off += total * static_cast<uint32_t>(shared_lane_bytes(lane));
  }
  if (with_keys && sizeof(K) == 4) {
    off = (off + 15) / 16 * 16;  // bucketed probing loads 16 bytes at a time
    lay.keys_offset = off;
    off += total * 4;
  }
  lay.counter_offset = (off + 15) / 16 * 16;
  lay.total_bytes = lay.counter_offset + 16;
  return lay;
}

}  // namespace tally::gpu::aggregator
