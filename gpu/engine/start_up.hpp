#pragma once
// What tallyd prepares when the GPU engine starts, so that the first query
// after a start costs what later ones cost: device
// memory the stream-ordered pool would otherwise map while a query runs (an
// aggregator's spill and sort scratch, up to total memory /
// kScratchMemoryDivisor), and pinned host blocks the result extraction
// would otherwise allocate (cudaHostAlloc, milliseconds) on its first large
// result. Host-only header; gpu_stub.cpp has the CPU-only build's no-op. The
// host heap keeps freed result arrays for the next query under the policy
// every tallyd runs with (common/heap_retention.hpp, set by the CPU engine).
#include <cstddef>
#include <cstdint>

#include "gpu/rules/device_info.hpp"
#include "gpu/first_use_counts.hpp"
#include "gpu/group_by.hpp"
#include "gpu/rules/variant_config.hpp"

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

// What the first query of a shape that has no tuning-cache entry would
// otherwise do first in this process (a process's first query pays for
// each of these once, a large share of a cold query): every
// variant's launch path for int4 and int8 keys, with count(*)+sum(int4 NOT
// NULL) (the count+sum kernels) and with a nullable generic aggregate set,
// at each rows_per_thread (a template parameter) and fill factors that
// select the batched and unbatched flushes: the kernels' first launches,
// attribute and occupancy look-ups, CUB's first sort, and pinned blocks of
// the sizes those aggregators take, several aggregators alive at once as in
// a cold query's race, returned to the pool. Small synthetic chunks
// (kWarmRows rows) on a stream of its own; stops when `budget_ms` is spent.
// Never fails: an error (little memory) ends it and leaves the rest on
// demand.
struct LaunchPathWarmUp {
  int aggregations = 0;  // rehearsals that ran
  int failed = 0;        // rehearsals that failed (the rest of that shape is then on demand)
  bool out_of_time = false;
  bool already_warmed = false;  // an earlier call in this process did it (nothing ran)
  double ms = 0;
  uint64_t pinned_allocations = 0;    // pinned blocks it allocated (first_use_counts)
  uint64_t kernel_first_lookups = 0;  // kernels it used first
};
constexpr int64_t kWarmRows = int64_t{1} << 16;
constexpr double kWarmBudgetMs = 3000;  // a bound on tallyd's start; ~0.1-0.3 s expected
LaunchPathWarmUp warm_launch_paths(const DeviceInfo& device, double budget_ms = kWarmBudgetMs);

}  // namespace tally::gpu
