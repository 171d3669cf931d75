#pragma once
// GLOBAL: one open-addressing table in device memory, CAS on keys, atomics
// on the lanes; every row goes straight to the global table.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/aggregator/kernels/aggregate_kernels.cuh"
#include "gpu/aggregator/launch_context.cuh"
#include "gpu/aggregator/launch_limits.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/host_steps.hpp"

namespace tally::gpu::aggregator {

template <class K, int R>
void launch_global_r(const LaunchContext<K>& ctx, const kernels::ChunkRef<K>& ref, VariantConfig& c,
                     LaunchReport& report) {
  auto kernel = kernels::global_aggregate_kernel<K, R>;
  clamp_threads(ctx.device, kernel, c, report);
  const int64_t tiles = (ref.rows + static_cast<int64_t>(c.launch.threads_per_block) * R - 1) /
                        (static_cast<int64_t>(c.launch.threads_per_block) * R);
  const int grid = occupancy_grid(ctx.device, kernel, c, 0, tiles, report);
  report.grid_blocks = grid;
  kernel<<<grid, c.launch.threads_per_block, 0, ctx.stream>>>(ref, ctx.lanes, ctx.table, ctx.spill);
  TALLY_CUDA_CHECK_LAUNCH("global_aggregate_kernel");
  host_mark("kernel");
}

template <class K>
void launch_global(const LaunchContext<K>& ctx, const kernels::ChunkRef<K>& ref, VariantConfig& c,
                   LaunchReport& report) {
  if (ref.rows == 0) return;
  switch (c.launch.rows_per_thread) {
    case 1:
      launch_global_r<K, 1>(ctx, ref, c, report);
      break;
    case 2:
      launch_global_r<K, 2>(ctx, ref, c, report);
      break;
    case 4:
      launch_global_r<K, 4>(ctx, ref, c, report);
      break;
    default:
      launch_global_r<K, 8>(ctx, ref, c, report);
      break;
  }
}

}  // namespace tally::gpu::aggregator
