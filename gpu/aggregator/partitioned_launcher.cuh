#pragma once
// PARTITIONED: the piece is radix-sorted by its top key bits into 2^bits
// partitions, then one block per partition (or per piece of a dominant
// partition) aggregates in a shared-memory table and flushes it to the
// compact output (a partition owned outright, while nothing else holds
// groups) or to the global table (partition_kernels.cuh,
// partition_count_sum_kernel.cuh).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_scan.cuh>
#include <optional>

#include "gpu/aggregator/aggregation_table.cuh"
#include "gpu/aggregator/kernels/partition_count_sum_kernel.cuh"
#include "gpu/aggregator/kernels/partition_kernels.cuh"
#include "gpu/aggregator/key_sort.cuh"
#include "gpu/aggregator/launch_context.cuh"
#include "gpu/aggregator/launch_limits.cuh"
#include "gpu/aggregator/shared_layout.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/host_steps.hpp"
#include "gpu/simple_format.hpp"
#include "gpu/rules/variant_rules.hpp"

namespace tally::gpu::aggregator {

// A partition with more rows than this many times a block's fair share
// (rows / grid) is cut into pieces shared by several blocks; 2 keeps
// balanced partitions whole when there are fewer of them than blocks (e.g.
// 256 partitions on 264 resident blocks).
constexpr int64_t kPieceShare = 2;
// Bytes of static shared memory the partition kernel declares (item bounds,
// flags, output cursor), kept out of its dynamic table's budget.
constexpr size_t kPartitionStaticShared = 128;

// count(*) + sum(int4 NOT NULL) without NULL keys: the partitioned variant
// runs partition_count_sum_kernel (lanes fixed at compile time).
template <class K>
bool count_sum_fast(const LaunchContext<K>& ctx, const kernels::ChunkRef<K>& sorted) {
  return ctx.count_sum_shape && !sorted.key_validity && !sorted.columns[0].validity &&
         !sorted.columns[0].wide;
}

// The partition kernel's shared-table parameters for `slots` (aligned).
template <class K>
kernels::SharedParams partition_params(uint32_t slots, double tile, const VariantConfig& c) {
  kernels::SharedParams p;
  p.slots = slots;
  p.replicas = 1;
  p.insert_limit = static_cast<uint32_t>(slots * c.fill());
  const double thr = slots * c.fill() - tile;
  p.flush_threshold = thr >= 1 ? static_cast<uint32_t>(thr) : 0;
  p.flush_on_fill = true;
  p.hash = c.hash == HashKind::range ? HashKind::murmur : c.hash;
  p.area_magic = kernels::hash_area_magic<K>(slots);
  p.bucketed = true;
  return p;
}

// The partition kernel's shared layout. The count+sum kernel adds its list
// of claimed slots (uint16) with room for every claim the table allows:
// with the fill check the occupancy stays <= flush_threshold + one tile <=
// insert_limit (the tile the kernel runs: rows_per_thread is 1, 2, 4 or 8
// here, and clamp_threads only lowers the threads); without it, the insert
// limit plus one claim per thread that passed the limit check before the
// occupancy counted the others, and never more than the slots.
template <class K>
kernels::SharedLayout partition_layout(const LanePlan& plan, const kernels::SharedParams& p,
                                       bool count_sum, int threads) {
  kernels::SharedLayout lay = shared_layout<K>(plan, p.slots, 1, true);
  if (count_sum) {
    lay.list_capacity =
        p.flush_threshold > 0
            ? p.insert_limit
            : static_cast<uint32_t>(std::min<uint64_t>(
                  p.slots, static_cast<uint64_t>(p.insert_limit) + static_cast<uint64_t>(threads)));
    lay.list_offset = lay.total_bytes;
    lay.total_bytes += (2 * lay.list_capacity + 15) / 16 * 16;
  }
  return lay;
}

// The most slots a partition table may have within `budget` bytes: the
// generic kernel's table, or the count+sum kernel's with its list (slot
// indices < 2^16 there, and the list takes room: e.g. at 2 x 1024 threads,
// 2 rows per thread and fill 70%, about 8% fewer slots).
template <class K>
uint32_t partition_slots_fitting(const LaunchContext<K>& ctx, size_t budget, bool count_sum,
                                 const VariantConfig& c) {
  uint32_t fit = hash_slots_fitting(ctx.spec, ctx.plan, budget);
  if (!count_sum) return fit;
  constexpr uint32_t kMaxListedSlots = 65532;  // aligned, and indices of ordinary slots < 65535
  fit = std::min(fit, kMaxListedSlots);
  const double tile = static_cast<double>(c.launch.threads_per_block) * c.launch.rows_per_thread;
  while (fit > 0) {
    const kernels::SharedParams p =
        partition_params<K>(kernels::aligned_hash_slots<K>(fit), tile, c);
    if (partition_layout<K>(ctx.plan, p, true, c.launch.threads_per_block).total_bytes <= budget)
      break;
    fit = fit > 64 ? fit - 16 : 0;
  }
  return fit;
}

// The count+sum partition kernel for a fill-check mode and a hash.
template <class K, int R>
const void* count_sum_kernel_of(bool fill_checked, bool identity) {
  using namespace kernels;
  if (fill_checked)
    return identity ? reinterpret_cast<const void*>(partition_count_sum_kernel<K, R, true, true>)
                    : reinterpret_cast<const void*>(partition_count_sum_kernel<K, R, true, false>);
  return identity ? reinterpret_cast<const void*>(partition_count_sum_kernel<K, R, false, true>)
                  : reinterpret_cast<const void*>(partition_count_sum_kernel<K, R, false, false>);
}

template <class K, int R>
void launch_partitioned_r(const LaunchContext<K>& ctx, LaunchScratch& scratch,
                          const kernels::ChunkRef<K>& sorted, uint32_t parts,
                          const DirectOutput& out, VariantConfig& c, const kernels::SharedParams& p,
                          LaunchReport& report) {
  // count(*) + sum(int4 NOT NULL) without NULL keys: the kernel with the
  // lanes fixed at compile time (partition_count_sum_kernel.cuh).
  const bool fast = count_sum_fast(ctx, sorted);
  const bool fill_checked = p.flush_threshold > 0;  // see partition_count_sum_kernel
  // The shared table's hash is fixed at compile time there: identity (dense
  // ranges) or murmur (count_sum_home).
  const bool identity = p.hash == HashKind::identity;
  const void* kernel =
      !fast ? reinterpret_cast<const void*>(kernels::partition_aggregate_kernel<K, R>)
            : count_sum_kernel_of<K, R>(fill_checked, identity);
  const kernels::SharedLayout lay =
      partition_layout<K>(ctx.plan, p, fast, c.launch.threads_per_block);
  TALLY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(lay.total_bytes)));
  clamp_threads(ctx.device, kernel, c, report);
  const int64_t tile = static_cast<int64_t>(c.launch.threads_per_block) * R;
  const int64_t slots_of_blocks =
      static_cast<int64_t>(ctx.device.sm_count) * c.launch.blocks_per_sm;
  const int grid = occupancy_grid(ctx.device, kernel, c, lay.total_bytes,
                                  std::max<int64_t>(parts, slots_of_blocks), report);
  report.grid_blocks = grid;
  // Pieces of at most twice a block's fair share of the rows: balanced
  // partitions stay whole (owned outright), a dominant one is shared.
  const int64_t piece_rows =
      std::max<int64_t>(tile, (kPieceShare * sorted.rows + grid - 1) / std::max(grid, 1));
  uint32_t* pieces = scratch.part_pieces.get<uint32_t>();
  kernels::partition_pieces_kernel<K><<<(parts + 256) / 256, 256, 0, ctx.stream>>>(
      scratch.part_starts.get<int64_t>(), parts, piece_rows, pieces);
  TALLY_CUDA_CHECK_LAUNCH("partition_pieces_kernel");
  uint32_t* first_item = pieces + (parts + 1);
  size_t temp = 0;
  TALLY_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(nullptr, temp, pieces, first_item, parts + 1, ctx.stream));
  scratch.sort_temp.ensure(temp, ctx.stream);
  TALLY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scratch.sort_temp.get(), temp, pieces, first_item,
                                                 parts + 1, ctx.stream));
  // Items <= parts + rows / piece_rows.
  const uint64_t max_items = parts + static_cast<uint64_t>(sorted.rows / piece_rows) + 1;
  scratch.part_items.ensure(max_items * sizeof(kernels::PartitionItem), ctx.stream);
  kernels::PartitionItem* work = scratch.part_items.get<kernels::PartitionItem>();
  kernels::partition_items_kernel<K><<<(parts + 255) / 256, 256, 0, ctx.stream>>>(
      first_item, scratch.part_starts.get<int64_t>(), parts, work);
  TALLY_CUDA_CHECK_LAUNCH("partition_items_kernel");
  const uint32_t* item_count = first_item + parts;  // stays on the device
  const bool direct = out.owned;
  const auto launch_count_sum = [&](auto kern) {
    kern<<<grid, c.launch.threads_per_block, lay.total_bytes, ctx.stream>>>(
        sorted, lay, p, work, item_count, direct, ctx.table, ctx.spill, out.ref);
  };
  if (fast && fill_checked && identity)
    launch_count_sum(kernels::partition_count_sum_kernel<K, R, true, true>);
  else if (fast && fill_checked)
    launch_count_sum(kernels::partition_count_sum_kernel<K, R, true, false>);
  else if (fast && identity)
    launch_count_sum(kernels::partition_count_sum_kernel<K, R, false, true>);
  else if (fast)
    launch_count_sum(kernels::partition_count_sum_kernel<K, R, false, false>);
  else
    kernels::partition_aggregate_kernel<K, R>
        <<<grid, c.launch.threads_per_block, lay.total_bytes, ctx.stream>>>(
            sorted, ctx.lanes, lay, p, work, item_count, direct, ctx.table, ctx.spill, out.ref);
  TALLY_CUDA_CHECK_LAUNCH("partition_aggregate_kernel");
}

// After the sort: partition boundaries, then one block per partition. The
// shared table is sized for the expected groups of one partition (estimate
// / partitions) with slack and one tile of new keys (the fill check runs at
// tile starts), within what blocks_per_sm leaves.
template <class K>
void launch_partitions(const LaunchContext<K>& ctx, LaunchScratch& scratch,
                       AggregationTable<K>& table, const kernels::ChunkRef<K>& sorted,
                       int begin_bit, int bits, VariantConfig& c, LaunchReport& report) {
  if (sorted.rows == 0) return;
  const uint32_t parts = 1u << bits;
  scratch.part_starts.ensure((parts + 1) * sizeof(int64_t), ctx.stream);
  scratch.part_pieces.ensure(2 * (parts + 1) * sizeof(uint32_t), ctx.stream);
  kernels::partition_bounds_kernel<K><<<(parts + 256) / 256, 256, 0, ctx.stream>>>(
      sorted.keys, sorted.rows, begin_bit, parts, scratch.part_starts.get<int64_t>());
  TALLY_CUDA_CHECK_LAUNCH("partition_bounds_kernel");
  const DirectOutput out = table.direct_output(static_cast<uint64_t>(sorted.rows));

  // Leave room for the kernel's static shared variables, or the occupancy
  // check drops to one block per SM (tables sized for two 1024-thread
  // blocks per SM would run at one).
  const size_t budget =
      shared_budget_per_block(ctx.device, c.launch.blocks_per_sm) - kPartitionStaticShared;
  const bool count_sum = count_sum_fast(ctx, sorted);
  const uint32_t fit = partition_slots_fitting(ctx, budget, count_sum, c);
  const double tile = static_cast<double>(c.launch.threads_per_block) * c.launch.rows_per_thread;
  const double per_partition =
      static_cast<double>(std::max<uint64_t>(ctx.estimated_groups, 1)) / parts;
  const double want = (per_partition * kPartitionSlack + tile) / c.fill() + 64;
  uint32_t slots = static_cast<uint32_t>(std::min<double>(want, fit));
  if (want > fit)
    report.adjustments.push_back(
        simple_format("partition table clamped to {} slots ({} B per block)", fit, budget));
  slots = kernels::aligned_hash_slots<K>(std::max<uint32_t>(slots, std::min<uint32_t>(fit, 64)));
  const kernels::SharedParams p = partition_params<K>(slots, tile, c);
  c.shared_replicas = 1;
  report.shared_slots = slots;
  switch (c.launch.rows_per_thread) {
    case 1:
      launch_partitioned_r<K, 1>(ctx, scratch, sorted, parts, out, c, p, report);
      break;
    case 2:
      launch_partitioned_r<K, 2>(ctx, scratch, sorted, parts, out, c, p, report);
      break;
    case 4:
      launch_partitioned_r<K, 4>(ctx, scratch, sorted, parts, out, c, p, report);
      break;
    default:
      launch_partitioned_r<K, 8>(ctx, scratch, sorted, parts, out, c, p, report);
      break;
  }
}

// The partitioned variant on one piece whose key range is `range`:
// partition_bits from the configuration (0: from the estimate), the sort by
// those bits, the partitions.
template <class K>
void launch_partitioned(const LaunchContext<K>& ctx, LaunchScratch& scratch,
                        AggregationTable<K>& table, const kernels::ChunkRef<K>& ref,
                        const KeyRange& range, VariantConfig& c, LaunchReport& report) {
  int pbits = c.partition_bits;
  if (pbits <= 0) {
    ChunkFacts facts;
    facts.rows = static_cast<uint64_t>(ref.rows);
    facts.key_range = range;
    facts.estimated_groups = ctx.estimated_groups;
    pbits = default_launch_config(Variant::partitioned_hash, ctx.spec, ctx.device, facts)
                .partition_bits;
    report.adjustments.push_back(
        simple_format("partition_bits 0 -> {} (from the estimate)", pbits));
  }
  pbits = std::clamp(pbits, 1, kMaxPartitionBits);
  c.partition_bits = pbits;
  const auto bits = sort_bits<K>(&range, pbits);
  const kernels::ChunkRef<K> sorted = sort_piece(ctx, scratch, ref, bits.first, bits.second);
  host_mark("sorted");
  launch_partitions(ctx, scratch, table, sorted, bits.first, bits.second - bits.first, c, report);
  host_mark("kernel");
}

}  // namespace tally::gpu::aggregator
