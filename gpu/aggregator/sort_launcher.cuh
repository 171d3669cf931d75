#pragma once
// SORT: CUB radix sort of the piece (only the key bits that differ in its
// range), then one thread per run of sorted rows aggregates its run and
// merges it into the global table.
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>

#include "gpu/aggregator/kernels/aggregate_kernels.cuh"
#include "gpu/aggregator/key_sort.cuh"
#include "gpu/aggregator/launch_context.cuh"
#include "gpu/cuda_check.cuh"

namespace tally::gpu::aggregator {

// Rows per thread of the sorted-run kernel, as a multiple of rows_per_thread.
constexpr int kSortRunMultiplier = 16;

template <class K>
void launch_sort(const LaunchContext<K>& ctx, LaunchScratch& scratch,
                 const kernels::ChunkRef<K>& ref, const std::optional<KeyRange>& range,
                 VariantConfig& c, LaunchReport& report) {
  const auto bits = sort_bits<K>(range ? &*range : nullptr, 0);
  const kernels::ChunkRef<K> sorted = sort_piece(ctx, scratch, ref, bits.first, bits.second);
  const int run = c.launch.rows_per_thread * kSortRunMultiplier;
  const int64_t threads = (sorted.rows + run - 1) / run;
  const int grid =
      static_cast<int>((threads + c.launch.threads_per_block - 1) / c.launch.threads_per_block);
  report.grid_blocks = grid;
  if (grid > 0) {
    kernels::sorted_run_kernel<K><<<grid, c.launch.threads_per_block, 0, ctx.stream>>>(
        sorted, ctx.lanes, ctx.table, ctx.spill, run);
    TALLY_CUDA_CHECK_LAUNCH("sorted_run_kernel");
  }
}

}  // namespace tally::gpu::aggregator
