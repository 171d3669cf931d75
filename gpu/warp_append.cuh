#pragma once
// Appending a warp's kept items to one output array: the warp reserves its
// positions with a single atomic on the shared count (one atomic per item on
// one counter serializes at millions of items), and each keeping lane takes
// its place among them in lane order. Every lane of the warp must call it.
#include <cuda_runtime.h>

namespace tally::gpu {

// This lane's position in the output (meaningful only where `kept`).
template <class Count>
__device__ __forceinline__ Count warp_append(bool kept, Count* count) {
  const unsigned lane = threadIdx.x & 31u;
  const unsigned kept_lanes = __ballot_sync(0xffffffffu, kept);
  Count base = 0;
  if (lane == 0 && kept_lanes != 0) base = atomicAdd(count, static_cast<Count>(__popc(kept_lanes)));
  base = __shfl_sync(0xffffffffu, base, 0);
  return base + static_cast<Count>(__popc(kept_lanes & ((1u << lane) - 1u)));
}

}  // namespace tally::gpu
