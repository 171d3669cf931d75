#pragma once
// What tallyd prepares when the GPU engine starts, so that the first query
// after a start costs what later ones cost (issue 6's restart run): device
// memory the stream-ordered pool would otherwise map while a query runs (an
// aggregator's spill and sort scratch, up to total memory /
// kScratchMemoryDivisor), and pinned host blocks the result extraction
// would otherwise allocate (cudaHostAlloc, milliseconds) on its first large
// result. Host-only header; gpu_stub.cpp has the CPU-only build's no-op.
#include "gpu/device_info.hpp"

namespace tally::gpu {

// Grows the device's default memory pool (which keeps freed memory, see
// device_buffer.cuh) by the aggregators' scratch budget, and fills the
// pinned-buffer pool with blocks for results of up to ~2^20 groups. Once per
// process and device; errors (little free memory) only leave less prepared.
void prepare_for_queries(const DeviceInfo& device);

}  // namespace tally::gpu
