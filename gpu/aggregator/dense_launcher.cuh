#pragma once
// DENSE: a direct-indexed array per block in shared memory over the chunk's
// key range [min, max] (from statistics or measured), merged into the global
// table. Cannot run when the range does not fit the device's shared memory.
#include <cstdint>

#include "common/error.hpp"
#include "gpu/aggregator/launch_context.cuh"
#include "gpu/aggregator/shared_launcher.cuh"
#include "gpu/simple_format.hpp"
#include "gpu/rules/variant_rules.hpp"

namespace tally::gpu::aggregator {

template <class K>
void launch_dense(const LaunchContext<K>& ctx, LaunchScratch& scratch,
                  const kernels::ChunkRef<K>& ref, const KeyRange& range, VariantConfig& c,
                  LaunchReport& report) {
  const uint64_t size = range.size();
  const uint32_t fit =
      dense_slots_fitting(ctx.spec, ctx.plan, ctx.device.shared_memory_per_block_optin);
  if (size > fit)
    throw Error(SqlState::feature_not_supported,
                simple_format("GPU: dense variant cannot hold a key range of {} in {} shared slots",
                              size, fit));
  launch_shared<K, true>(ctx, scratch, ref, c, static_cast<uint32_t>(size), range.min, false,
                         report);
}

}  // namespace tally::gpu::aggregator
