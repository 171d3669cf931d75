#pragma once
// SHARED-MEMORY HASH with a key dictionary (kernels/dictionary_kernels.cuh):
// one block builds a cuckoo table from a sample of the chunk, then the
// aggregation indexes per-lane accumulator copies by the key's table slot.
// Chosen by launch_shared() when can_use_dictionary() allows it.
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cstdint>

#include "gpu/aggregator/kernels/dictionary_kernels.cuh"
#include "gpu/aggregator/kernels/maintenance_kernels.cuh"
#include "gpu/aggregator/launch_context.cuh"
#include "gpu/aggregator/launch_limits.cuh"
#include "gpu/aggregator/shared_layout.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/host_steps.hpp"
#include "gpu/simple_format.hpp"
#include "gpu/rules/variant_rules.hpp"

namespace tally::gpu::aggregator {

template <class K, int R>
void launch_dictionary_r(const LaunchContext<K>& ctx, const kernels::ChunkRef<K>& ref,
                         VariantConfig& c, const kernels::SharedLayout& lay,
                         const kernels::SharedParams& p, const kernels::DictionaryParams& dp,
                         const kernels::DictionaryRef<K>& d, LaunchReport& report) {
  auto kernel = kernels::dictionary_aggregate_kernel<K, R>;
  if (ctx.count_sum_shape && !ref.key_validity && !ref.columns[0].validity &&
      !ref.columns[0].wide) {
    kernel = kernels::dictionary_count_sum_kernel<K, R, false>;
    // 16-byte loads of 4 keys and 4 values where both columns allow them.
    if constexpr (sizeof(K) == 4 && R % 4 == 0) {
      const auto aligned = [](const void* q) { return reinterpret_cast<uintptr_t>(q) % 16 == 0; };
      if (aligned(ref.keys) && aligned(ref.columns[0].data))
        kernel = kernels::dictionary_count_sum_kernel<K, R, true>;
    }
  }
  ensure_dynamic_shared(ctx.device.ordinal, reinterpret_cast<const void*>(kernel), lay.total_bytes);
  clamp_threads(ctx.device, kernel, c, report);
  const int64_t tiles = (ref.rows + static_cast<int64_t>(c.launch.threads_per_block) * R - 1) /
                        (static_cast<int64_t>(c.launch.threads_per_block) * R);
  const int grid = occupancy_grid(ctx.device, kernel, c, lay.total_bytes, tiles, report);
  report.grid_blocks = grid;
  kernel<<<grid, c.launch.threads_per_block, lay.total_bytes, ctx.stream>>>(
      ref, ctx.lanes, lay, p, dp, d, ctx.table, ctx.spill);
  TALLY_CUDA_CHECK_LAUNCH("dictionary_aggregate_kernel");
  host_mark("kernel");
}

template <class K>
void launch_dictionary(const LaunchContext<K>& ctx, DeviceBuffer& dictionary,
                       const kernels::ChunkRef<K>& ref, VariantConfig& c, LaunchReport& report) {
  const DictionarySizing z = dictionary_sizing(ctx.spec, ctx.estimated_groups);
  const auto fits = [&](uint32_t r) {
    return dictionary_shared_bytes(ctx.spec, ctx.plan, z, r) <=
           shared_budget_per_block(ctx.device, c.launch.blocks_per_sm);
  };
  while (c.launch.blocks_per_sm > 1 && !fits(1)) {
    --c.launch.blocks_per_sm;
    report.adjustments.push_back(
        simple_format("blocks_per_sm -> {} so that the dictionary fits", c.launch.blocks_per_sm));
  }
  uint32_t replicas = std::bit_floor(static_cast<uint32_t>(std::clamp(c.shared_replicas, 1, 32)));
  while (replicas > 1 && !fits(replicas)) replicas /= 2;
  if (static_cast<int>(replicas) != c.shared_replicas) {
    report.adjustments.push_back(
        simple_format("shared_replicas {} -> {}", c.shared_replicas, replicas));
    c.shared_replicas = static_cast<int>(replicas);
  }
  // Device image: the cuckoo table's keys, the multipliers the build kernel
  // chose for them, then the sample's set of distinct keys.
  const size_t table_bytes = static_cast<size_t>(z.slots) * sizeof(K);
  const size_t hash_offset = (table_bytes + 15) / 16 * 16;
  const size_t set_offset = (hash_offset + sizeof(kernels::DictionaryHash) + 15) / 16 * 16;
  const size_t set_bytes = static_cast<size_t>(z.set_slots) * sizeof(K);
  dictionary.ensure(set_offset + set_bytes, ctx.stream);
  kernels::DictionaryRef<K> d;
  d.keys = dictionary.get<K>();
  d.hash =
      reinterpret_cast<kernels::DictionaryHash*>(dictionary.get<unsigned char>() + hash_offset);
  d.slots = z.slots;
  d.set = reinterpret_cast<K*>(dictionary.get<unsigned char>() + set_offset);
  d.set_slots = z.set_slots;
  // The sample: one row per thread over many blocks into the set (its
  // latency, one random load per row, hidden by the whole GPU); then one
  // block places the set's keys.
  kernels::fill_kernel<K><<<(z.set_slots + 255) / 256, 256, 0, ctx.stream>>>(
      d.set, z.set_slots, kernels::KeyTraits<K>::empty);
  TALLY_CUDA_CHECK_LAUNCH("fill_kernel(dictionary set)");
  TALLY_CUDA_CHECK(cudaMemsetAsync(&d.hash->distinct, 0, sizeof(uint32_t), ctx.stream));
  const int64_t samples =
      static_cast<int64_t>(dictionary_sample_rows(z, static_cast<uint64_t>(ref.rows)));
  const int sample_grid = static_cast<int>(
      std::min<int64_t>((samples + 255) / 256, static_cast<int64_t>(ctx.device.sm_count) * 8));
  kernels::dictionary_sample_kernel<K>
      <<<std::max(sample_grid, 1), 256, 0, ctx.stream>>>(ref, samples, z.ids, d);
  TALLY_CUDA_CHECK_LAUNCH("dictionary_sample_kernel");
  auto build = kernels::dictionary_build_kernel<K>;
  const size_t build_bytes = set_bytes + table_bytes + 16;
  ensure_dynamic_shared(ctx.device.ordinal, reinterpret_cast<const void*>(build), build_bytes);
  const cudaFuncAttributes attr =
      cached_attributes(ctx.device.ordinal, reinterpret_cast<const void*>(build));
  build<<<1, std::min(1024, attr.maxThreadsPerBlock) / 32 * 32, build_bytes, ctx.stream>>>(d);
  TALLY_CUDA_CHECK_LAUNCH("dictionary_build_kernel");

  kernels::SharedLayout lay = shared_layout<K>(ctx.plan, z.slots + z.extra_slots, replicas, false);
  kernels::DictionaryParams dp;
  uint32_t off = (lay.total_bytes + 15) / 16 * 16;
  lay.keys_offset = off;
  off += (z.extra_slots * static_cast<uint32_t>(sizeof(K)) + 15) / 16 * 16;
  dp.keys_offset = off;
  off += static_cast<uint32_t>(table_bytes);
  lay.total_bytes = off;
  dp.extra_slots = z.extra_slots;
  dp.extra_limit = z.extra_slots / 2;
  kernels::SharedParams p;
  p.slots = z.slots + z.extra_slots;
  p.replicas = replicas;
  p.hash = HashKind::murmur;
  report.shared_slots = p.slots;
  if (c.launch.rows_per_thread < 2) {
    report.adjustments.push_back("rows_per_thread 1 -> 2 (dictionary kernel: 2, 4 or 8)");
    c.launch.rows_per_thread = 2;
  }
  switch (c.launch.rows_per_thread) {
    case 2:
      launch_dictionary_r<K, 2>(ctx, ref, c, lay, p, dp, d, report);
      break;
    case 4:
      launch_dictionary_r<K, 4>(ctx, ref, c, lay, p, dp, d, report);
      break;
    default:
      launch_dictionary_r<K, 8>(ctx, ref, c, lay, p, dp, d, report);
      break;
  }
}

}  // namespace tally::gpu::aggregator
