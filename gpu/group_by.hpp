#pragma once
// GPU GROUP BY over a stream of chunks (DESIGN.md section 5): every chunk, with
// any variant and launch configuration, is merged into one global hash table in
// device memory; finish() extracts the groups. The global table is sized from
// the estimate; when more groups arrive, overflowing rows/partials spill to a
// side buffer, the table grows, and the spill is merged: never a lost or wrong
// group. Host-only header (no CUDA types): builds without nvcc, where every
// entry point throws Error(XX000, "GPU: ...").
#include <cstdint>
#include <memory>
#include <vector>

#include "common/group_test.hpp"

#include "gpu/rules/device_info.hpp"
#include "gpu/group_by_spec.hpp"
#include "gpu/rules/variant_config.hpp"

struct CUstream_st;

namespace tally::gpu {

using StreamHandle = CUstream_st*;  // cudaStream_t; nullptr = the legacy default stream

// An aggregator's spill and sort scratch for one launch may take device
// memory / this (max_rows_per_launch derives from it): the rest stays for the
// column cache and other queries.
constexpr uint64_t kScratchMemoryDivisor = 8;

struct TableOptions {
  uint64_t estimated_groups = 1024;  // sizes the global table
  double max_fill = 0.5;             // global table occupancy that triggers growth
  HashKind hash = HashKind::murmur;  // global table hash
  // HashKind::range needs the key range the table will mostly see (catalog
  // statistics); without it the table uses murmur.
  KeyRange key_range_hint{0, -1};
  // Rows aggregated per kernel launch (bounds the spill and sort buffers);
  // 0 = derived from device memory.
  uint64_t max_rows_per_launch = 0;
  // Whether the partitioned variant may write a first chunk's groups to its
  // compact output (no global-table merge) when the table is still empty.
  // Only a one-chunk query gains: with more chunks the output is merged into
  // the table at the next chunk, and owning it costs a synchronization per
  // chunk of the two (GpuRun passes false when more chunks follow).
  bool own_partitioned_output = true;
};

class GroupByAggregator {
 public:
  GroupByAggregator(const DeviceInfo& device, GroupBySpec spec, TableOptions options,
                    StreamHandle stream = nullptr);
  ~GroupByAggregator();
  GroupByAggregator(const GroupByAggregator&) = delete;
  GroupByAggregator& operator=(const GroupByAggregator&) = delete;

  // Aggregates a chunk resident in device memory. Checks `config` against the
  // device and reports adjustments; throws Error(0A000) when `variant` cannot
  // run this chunk (see can_use() in variant_rules.hpp) and Error(XX000) on a
  // device error. Does not synchronize: the overflow check is read
  // asynchronously, the table grows when a spill is seen (at the latest in
  // finish()/group_count()/finish_device()), so growths may be reported by a
  // later call than the chunk that caused them. The chunk's memory must stay
  // valid until the stream has run its kernels.
  LaunchReport consume(const ChunkPointers& device_chunk, Variant variant, const VariantConfig& config);
  // Same for a chunk in host memory (copied through a staging buffer).
  LaunchReport consume_host(const ChunkPointers& host_chunk, Variant variant, const VariantConfig& config);

  // Key range of a device chunk's non-NULL keys (one pass over the keys).
  KeyRange measure_key_range(const ChunkPointers& device_chunk);

  // Extracts every group (order unspecified). The aggregator stays usable.
  GroupByResult finish();
  // Optional, right after the last consume(): enqueues finish()'s extraction
  // and its copy back behind the queued kernels when that needs no host
  // decision first (no overflow observation outstanding; a table, or the
  // chunks' key ranges, small enough to copy back whole), so that it runs
  // while the caller still does host work; finish() then only waits and
  // checks. Enqueues nothing otherwise. A consume() after it undoes it.
  void begin_finish();
  // Optional, after begin_finish() and before finish(), while the caller
  // waits for the GPU anyway: allocates the result's arrays at the size
  // begin_finish() copies back and touches their pages, so that finish()
  // takes no page fault on them. Does nothing when begin_finish() enqueued nothing.
  void prepare_result();
  // The group tests the next finish() applies before it builds the result
  // (AggregationRun::keep_groups_where): a large table's groups that one
  // rejects are left out (GroupByResult::dropped). Empty: none.
  void keep_groups_where(std::vector<GroupTest> tests);
  // Number of groups so far (synchronizes).
  uint64_t group_count();
  // Forget all groups, keep the allocations (benchmarks reuse one aggregator).
  void reset();
  // Enqueue-only variants for timing: no synchronization, no host copies.
  // Returns a device-side group count pointer that finish_device() fills.
  void finish_device();

  uint64_t table_capacity() const;
  const GroupBySpec& spec() const;
  void synchronize();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tally::gpu
