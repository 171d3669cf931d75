#pragma once
// Copies between the device and pageable memory (std::vector arrays) at the
// link's speed. cudaMemcpyAsync with pageable memory stages through the
// driver's own small pinned buffer on one thread: gigabytes (the group
// values of a hundred million key tuples back, a joined relation's lookup
// arrays out) moved at a fraction of what the link carries. Here the copies
// are cut into pieces, each worker thread copies its pieces on a stream of
// its own through two pinned buffers in turn, and moves one piece's bytes
// on the host while the other is in flight.
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace tally::gpu {

// One side pageable host memory, the other device memory, as the call says.
struct HostCopy {
  void* to = nullptr;
  const void* from = nullptr;
  size_t bytes = 0;
};

// Performs `copies` (to: pageable host memory, from: device memory) after
// the work enqueued on `stream` so far; returns when every byte is in place.
void copy_to_pageable(const std::vector<HostCopy>& copies, cudaStream_t stream);

// Performs `copies` (to: device memory, from: pageable host memory) after
// the work enqueued on `stream` so far; returns when every byte is in place.
void copy_from_pageable(const std::vector<HostCopy>& copies, cudaStream_t stream);

}  // namespace tally::gpu
