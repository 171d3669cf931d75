#pragma once
// What tallyd prepares when the GPU engine starts, so that the first query
// after a start costs what later ones cost (issue 6's restart run): device
// memory the stream-ordered pool would otherwise map while a query runs (an
// aggregator's spill and sort scratch, up to total memory /
// kScratchMemoryDivisor), and pinned host blocks the result extraction
// would otherwise allocate (cudaHostAlloc, milliseconds) on its first large
// result. Host-only header; gpu_stub.cpp has the CPU-only build's no-op.
#include <cstddef>
#include <cstdint>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "gpu/device_info.hpp"
#include "gpu/group_by.hpp"
#include "gpu/variant_config.hpp"

namespace tally::gpu {

// glibc's allocator serves blocks above its mmap threshold (128 KB, raised
// by each freed mapped block up to 32 MB) with fresh mappings and returns
// heap tops above twice that threshold to the kernel, so the result arrays
// a query builds (2^16 groups: keys, counts, sums, 0.5 MB each, ~3 MB in
// all) are faulted in page by page by the next queries too: ~800 minor
// faults in each of the first two rounds and 480 in every later one, 0.8-0.9
// ms a round against 0.22 ms once freed memory is kept (development VM, 2
// cores, bench/tuner/extraction_page_faults_bench; the H100's first warm query
// extracted its 65,536 groups in 0.81-0.98 ms against 0.49-0.62 ms in the
// next, bench/tuner/RESULTS.md session 7 23:12). Fixed thresholds keep freed
// blocks below kHeapMmapThreshold in the heap and up to kHeapTrimThreshold
// of free heap top, so a query's arrays reuse the previous query's pages:
// the resident memory stays at its peak instead. Process-wide; called once
// when the GPU engine starts (TALLY_GPU_KNOBS heap=0 leaves glibc's defaults).
constexpr size_t kHeapMmapThreshold = size_t{32} << 20;  // glibc's largest on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX)
constexpr size_t kHeapTrimThreshold = size_t{256} << 20;
inline void retain_freed_host_memory() {
#if defined(__GLIBC__)
  (void)mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHeapMmapThreshold));
  (void)mallopt(M_TRIM_THRESHOLD, static_cast<int>(kHeapTrimThreshold));
#endif
}

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
