#pragma once
// What tallyd prepares when the GPU engine starts, so that the first query
// after a start costs what later ones cost (issue 6's restart run): device
// memory the stream-ordered pool would otherwise map while a query runs (an
// aggregator's spill and sort scratch, up to total memory /
// kScratchMemoryDivisor), and pinned host blocks the result extraction
// would otherwise allocate (cudaHostAlloc, milliseconds) on its first large
// result. Host-only header; gpu_stub.cpp has the CPU-only build's no-op.
#include <cstdint>

#include "gpu/device_info.hpp"
#include "gpu/group_by.hpp"
#include "gpu/variant_config.hpp"

namespace tally::gpu {

// Grows the device's default memory pool (which keeps freed memory, see
// device_buffer.cuh) by the aggregators' scratch budget, and fills the
// pinned-buffer pool with blocks for results of up to ~2^20 groups. Once per
// process and device; errors (little free memory) only leave less prepared.
void prepare_for_queries(const DeviceInfo& device);

// One aggregation of the shape a cached query will run (its spec, the
// variant and configuration the tuning cache holds, table options as the
// query would make them), over `rows` synthetic rows whose keys take
// `groups` values, on its own stream, groups extracted and dropped: what the
// first query of that shape would otherwise do first in this process (its
// kernels' first launches and attribute look-ups, scratch carved from the
// pools, the host arrays of a result of that size) is done before it comes.
// Off the query path (GpuAggregationEngine runs it on a background thread
// when it reads the persisted records). Returns false on any error, which
// only leaves the first query unprepared.
bool rehearse_aggregation(const DeviceInfo& device, const GroupBySpec& spec, Variant variant, const VariantConfig& config,
                          const TableOptions& options, int64_t rows, uint64_t groups);

}  // namespace tally::gpu
