#pragma once
// What a variant's launcher needs besides the chunk and its launch
// configuration: the device, the aggregation's shape, the stream, and the
// views of the global table and the spill buffer it merges into (taken just
// before the launch, after any growth). Scratch buffers stay with the
// aggregator across launches so that a query of many chunks allocates them
// once.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/aggregator/kernels/views.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/rules/device_info.hpp"
#include "gpu/group_by_spec.hpp"
#include "gpu/lane_plan.hpp"

namespace tally::gpu::aggregator {

template <class K>
struct LaunchContext {
  const DeviceInfo& device;
  const GroupBySpec& spec;
  const LanePlan& plan;
  const kernels::LaneSet& lanes;
  uint64_t estimated_groups;
  // lanes = count(*) + sum(int4 column 0): the kernels with the lanes fixed
  // at compile time apply.
  bool count_sum_shape;
  cudaStream_t stream;
  kernels::GlobalTableRef<K> table;
  kernels::SpillRef spill;
};

// Per-launch scratch the launchers reuse: the shared-hash key dictionary's
// device image, the radix sort's keys, payloads, temporary storage and
// gathered columns (sort and partitioned variants), and the partition
// boundaries, pieces and work items of the partitioned variant.
struct LaunchScratch {
  DeviceBuffer dictionary;
  DeviceBuffer sort_keys, sort_payload_in, sort_payload_out, sort_temp, sort_gather;
  DeviceBuffer part_starts, part_pieces, part_items;
};

}  // namespace tally::gpu::aggregator
