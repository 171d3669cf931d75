#pragma once
// Device-to-host copies into pageable memory (std::vector arrays) at the
// link's speed. cudaMemcpyAsync into pageable memory stages through the
// driver's own small pinned buffer on one thread: gigabytes (the group
// values of a hundred million key tuples) came back at a fraction of what
// the link carries. Here the copies are cut into pieces, each worker thread
// copies its pieces on a stream of its own into two pinned buffers in turn,
// and moves each piece to its destination while the next one is in flight.
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace tally::gpu {

struct HostCopy {
  void* to = nullptr;          // pageable host memory
  const void* from = nullptr;  // device memory
  size_t bytes = 0;
};

// Performs `copies` after the work enqueued on `stream` so far; returns when
// every byte is in place.
void copy_to_pageable(const std::vector<HostCopy>& copies, cudaStream_t stream);

}  // namespace tally::gpu
