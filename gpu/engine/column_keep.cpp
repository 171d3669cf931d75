// GpuAggregationEngine::keep (pg_prewarm): a stored chunk's columns copied
// into the device column cache through a pipeline of the selections' pool,
// as a query's first read of them would copy them, but without a kernel.
#include <mutex>

#include "common/error.hpp"
#include "common/log.hpp"
#include "gpu/engine/gpu_aggregation_engine.hpp"
#include "gpu/engine/spec_translation.hpp"

namespace tally::gpu {

uint64_t GpuAggregationEngine::keep(const tally::KeptChunk& chunk) {
  if (chunk.rows == 0 || chunk.columns.empty()) return 0;
  std::lock_guard serial(keep_mutex_);
  // What is kept already stays; a column that would push the cache past its
  // bound is left out rather than evicting what earlier queries (or earlier
  // chunks of this prewarm) made resident.
  const ColumnCacheStats before = cache_.stats();
  uint64_t room = before.capacity_bytes > before.resident_bytes ? before.capacity_bytes - before.resident_bytes : 0;
  std::vector<HostColumn> columns;
  for (size_t i = 0; i < chunk.columns.size(); ++i) {
    if (cache_.contains(chunk.table, chunk.chunk, chunk.columns[i])) continue;
    HostColumn c;
    c.data = chunk.host[i].data;
    c.validity = chunk.host[i].validity;
    c.width_bytes = width_bytes(chunk.widths[i]);
    c.cacheable = true;
    c.key = ColumnKey{chunk.table, chunk.chunk, chunk.columns[i], static_cast<uint8_t>(c.width_bytes)};
    const uint64_t bytes = chunk.rows * (c.width_bytes + (c.validity ? 1u : 0u));
    if (bytes > room) continue;
    room -= bytes;
    columns.push_back(c);
  }
  if (columns.empty()) return 0;
  try {
    PipelineLease lease(*this, PipelineUse::selection);
    ChunkPipeline& pipeline = *lease.pooled.pipeline;
    StagedChunk staged = pipeline.stage(static_cast<int64_t>(chunk.rows), columns);
    // No kernel: the run's events only mark when the copies are done.
    pipeline.run(staged, [] {});
    (void)pipeline.completed(true);
    return staged.copied_bytes;
  } catch (const Error& e) {
    // Device memory short, or a device error: the columns stay on the host,
    // where queries read them as before.
    log::warning("gpu_keep_failed", {{"error", e.what()}});
    return 0;
  }
}

}  // namespace tally::gpu
