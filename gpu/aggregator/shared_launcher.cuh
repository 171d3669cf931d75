#pragma once
// SHARED-MEMORY HASH and DENSE: block-private tables in shared memory (a
// hash table, or an array indexed by key - min for a small key range),
// merged into the global table. Sizes the shared table within the budget
// that blocks_per_sm leaves and picks the kernel for rows_per_thread.
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "gpu/aggregator/dictionary_launcher.cuh"
#include "gpu/aggregator/kernels/aggregate_kernels.cuh"
#include "gpu/aggregator/launch_context.cuh"
#include "gpu/aggregator/launch_limits.cuh"
#include "gpu/aggregator/shared_layout.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/host_steps.hpp"
#include "gpu/simple_format.hpp"
#include "gpu/rules/variant_rules.hpp"

namespace tally::gpu::aggregator {

// With more per-lane replicas than this the tables are tiny and a scalar
// probe is cheaper than a 16-byte bucket probe (measured: scalar wins at 16
// replicas, buckets at 1-4).
constexpr uint32_t kMaxBucketedReplicas = 4;

// Dense slots (all replicas) up to which sums are split
// (SharedParams::split_flush_rows): a flush merges every slot.
constexpr uint64_t kMaxSplitSumSlots = 2048;

// Whether a dense table's sums are split: where every sum lane sums an int4
// column (sum32), whose small values add their low 16 bits alone (one
// atomic a row, as before, but one no thread waits for). An int8 or numeric
// sum's low word would take two atomics a row; not measured, so those keep
// the returning form.
inline bool splits_sums(const LanePlan& plan) {
  bool sum32 = false;
  for (const Lane& l : plan.lanes) {
    if (l.kind == LaneKind::sum_lo || l.kind == LaneKind::sum_hi || l.kind == LaneKind::sq_lo ||
        l.kind == LaneKind::sq_hi)
      return false;
    sum32 = sum32 || l.kind == LaneKind::sum32;
  }
  return sum32;
}

template <class K, bool kDense, int R>
void launch_shared_r(const LaunchContext<K>& ctx, const kernels::ChunkRef<K>& ref, VariantConfig& c,
                     kernels::SharedParams p, LaunchReport& report) {
  auto kernel = kernels::shared_aggregate_kernel<K, R, kDense>;
  bool fast = false;
  if constexpr (R >= 2) {
    fast = ctx.count_sum_shape && !ref.key_validity && !ref.columns[0].validity && !ref.columns[0].wide &&
           !p.warp_preaggregate;
    if (fast) kernel = kernels::shared_aggregate_kernel<K, R, kDense, true>;
  }
  // Split sums where the dense table is small: its flushes, every
  // kSplitSumRows rows of a block, then cost little beside the rows.
  if (kDense && !fast && !p.warp_preaggregate &&
      splits_sums(ctx.plan) && (static_cast<uint64_t>(p.slots) + 2) * p.replicas <= kMaxSplitSumSlots) {
    p.split_flush_rows = kernels::kSplitSumRows;
  }
  const kernels::SharedLayout lay = shared_layout<K>(ctx.plan, p.slots, p.replicas, !kDense);
  ensure_dynamic_shared(ctx.device.ordinal, reinterpret_cast<const void*>(kernel), lay.total_bytes);
  host_mark("shared limit");
  clamp_threads(ctx.device, kernel, c, report);
  const int64_t tiles = (ref.rows + static_cast<int64_t>(c.launch.threads_per_block) * R - 1) /
                        (static_cast<int64_t>(c.launch.threads_per_block) * R);
  const int grid = occupancy_grid(ctx.device, kernel, c, lay.total_bytes, tiles, report);
  host_mark("occupancy");
  report.grid_blocks = grid;
  report.shared_slots = p.slots;
  kernel<<<grid, c.launch.threads_per_block, lay.total_bytes, ctx.stream>>>(ref, ctx.lanes, lay, p,
                                                                            ctx.table, ctx.spill);
  TALLY_CUDA_CHECK_LAUNCH("shared_aggregate_kernel");
  host_mark("kernel");
}

// Sizes the shared table within the budget that blocks_per_sm leaves:
// `want_slots` (the dense range, which must fit, or the hash table for the
// estimate). The hash variant runs with a key dictionary where
// can_use_dictionary() allows it (dictionary_launcher.cuh).
template <class K, bool kDense>
void launch_shared(const LaunchContext<K>& ctx, LaunchScratch& scratch,
                   const kernels::ChunkRef<K>& ref, VariantConfig& c, uint32_t want_slots,
                   int64_t dense_min, bool flush_on_fill, LaunchReport& report) {
  if (ref.rows == 0) return;
  if constexpr (!kDense) {
    if (!flush_on_fill && !c.warp_preaggregate &&
        can_use_dictionary(ctx.spec, ctx.device, ctx.estimated_groups)) {
      launch_dictionary(ctx, scratch.dictionary, ref, c, report);
      return;
    }
  }
  size_t budget = shared_budget_per_block(ctx.device, c.launch.blocks_per_sm);
  uint32_t fit = kDense ? dense_slots_fitting(ctx.spec, ctx.plan, budget)
                        : hash_slots_fitting(ctx.spec, ctx.plan, budget);
  if (kDense && want_slots > fit) {
    // The range must fit: lower blocks_per_sm until it does.
    while (c.launch.blocks_per_sm > 1 && want_slots > fit) {
      --c.launch.blocks_per_sm;
      budget = shared_budget_per_block(ctx.device, c.launch.blocks_per_sm);
      fit = dense_slots_fitting(ctx.spec, ctx.plan, budget);
    }
    report.adjustments.push_back(simple_format("blocks_per_sm -> {} so that {} dense slots fit",
                                               c.launch.blocks_per_sm, want_slots));
  }
  const int tile = c.launch.threads_per_block * c.launch.rows_per_thread;
  uint32_t slots = std::min(want_slots, fit);
  if (!kDense) {
    // Room for a tile of new keys above the flush threshold.
    const uint32_t min_slots = static_cast<uint32_t>(2.0 * tile / c.fill()) + 64;
    if (flush_on_fill && slots < min_slots) {
      const int rpt = c.launch.rows_per_thread;
      while (c.launch.rows_per_thread > 1 &&
             fit < static_cast<uint32_t>(2.0 * c.launch.threads_per_block *
                                         c.launch.rows_per_thread / c.fill()) +
                       64)
        c.launch.rows_per_thread /= 2;
      if (rpt != c.launch.rows_per_thread)
        report.adjustments.push_back(
            simple_format("rows_per_thread {} -> {} so a tile fits the shared table", rpt,
                          c.launch.rows_per_thread));
    }
    if (want_slots > fit && !flush_on_fill)
      report.adjustments.push_back(
          simple_format("shared hash table clamped to {} slots ({} B per block)", fit, budget));
    slots = std::max<uint32_t>(std::min(want_slots, fit), std::min<uint32_t>(fit, 64));
  }
  // Per-lane copies only while they fit next to the table (and never with
  // flush_on_fill, whose threshold counts one table).
  uint32_t replicas = static_cast<uint32_t>(std::clamp(c.shared_replicas, 1, 32));
  replicas = std::bit_floor(replicas);
  if (flush_on_fill) replicas = 1;
  while (replicas > 1 &&
         (static_cast<uint64_t>(slots) + 2) * replicas > static_cast<uint64_t>(fit) + 2)
    replicas /= 2;
  if (static_cast<int>(replicas) != c.shared_replicas) {
    report.adjustments.push_back(
        simple_format("shared_replicas {} -> {}", c.shared_replicas, replicas));
    c.shared_replicas = static_cast<int>(replicas);
  }
  // Bucketed probes pay off where probes run past the home slot (few
  // replicas, larger tables); see shared_find_or_insert.
  const bool bucketed = !kDense && replicas <= kMaxBucketedReplicas;
  if (bucketed) slots = kernels::aligned_hash_slots<K>(slots);
  kernels::SharedParams p;
  p.replicas = replicas;
  p.dense_min = dense_min;
  p.slots = slots;
  p.bucketed = bucketed;
  if (bucketed) p.area_magic = kernels::hash_area_magic<K>(slots);
  p.insert_limit = static_cast<uint32_t>(slots * c.fill() * replicas);
  const double thr =
      slots * c.fill() - static_cast<double>(c.launch.threads_per_block) * c.launch.rows_per_thread;
  p.flush_threshold = thr > 0 ? static_cast<uint32_t>(thr) : 0;
  p.flush_on_fill = flush_on_fill;
  p.warp_preaggregate = c.warp_preaggregate;
  p.hash = c.hash;
  switch (c.launch.rows_per_thread) {
    case 1:
      launch_shared_r<K, kDense, 1>(ctx, ref, c, p, report);
      break;
    case 2:
      launch_shared_r<K, kDense, 2>(ctx, ref, c, p, report);
      break;
    case 4:
      launch_shared_r<K, kDense, 4>(ctx, ref, c, p, report);
      break;
    default:
      launch_shared_r<K, kDense, 8>(ctx, ref, c, p, report);
      break;
  }
}

// SHARED-MEMORY HASH: the shared table sized for the estimate at the
// configured fill factor.
template <class K>
void launch_shared_hash(const LaunchContext<K>& ctx, LaunchScratch& scratch,
                        const kernels::ChunkRef<K>& ref, VariantConfig& c, LaunchReport& report) {
  const double est = static_cast<double>(std::max<uint64_t>(ctx.estimated_groups, 1));
  const uint64_t want = static_cast<uint64_t>(est / c.fill()) + 16;
  launch_shared<K, false>(ctx, scratch, ref, c,
                          static_cast<uint32_t>(std::min<uint64_t>(want, UINT32_MAX / 2)), 0, false,
                          report);
}

}  // namespace tally::gpu::aggregator
