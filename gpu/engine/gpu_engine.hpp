#pragma once
// The GPU implementation of the planner/engine seam (common/aggregate_engine.hpp):
// a GpuAggregationEngine runs a query's aggregation with GroupByAggregator,
// choosing the variant per chunk by the rules in variant_rules.hpp (or the
// spec's forced_variant / forced_configuration). Chunks reach the device
// through a ChunkPipeline (chunk_pipeline.hpp): stored columns are kept in the
// engine's device column cache (column_cache.hpp) between queries, the others
// stream through pinned staging buffers with copy/compute overlap.
// Host-only: builds without CUDA, where make_gpu_engine() returns nullptr.
//
// Not yet: FILTER masks (sink throws 0A000; the planner never sends them),
// float inputs and moments (can_run() says false, so the planner uses the
// CPU engine).
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "config/config.hpp"
#include "common/aggregate_engine.hpp"
#include "common/parallel_tasks.hpp"
#include "gpu/pipeline/column_cache.hpp"
#include "gpu/rules/device_info.hpp"

namespace tally::gpu {

struct GpuEngineOptions {
  // Device memory the engine may use (cache + query state); 0 = 80% of the
  // device's free memory at start-up (Config::gpu_memory_budget).
  uint64_t memory_budget = 0;
  // Device column cache bound; 0 = half of the budget (Config::column_cache_bytes).
  uint64_t column_cache_bytes = 0;
  // Online tuning (Config::tuning): used when a query's spec has a tuning store.
  config::TuningConfig tuning;
  // The host threads that finalize several devices' runs and merge their
  // partial states (MultiDeviceEngine; the executor's worker pool); none:
  // the query's thread alone.
  tally::ParallelTasks host_tasks;
};

class GpuEngine : public tally::AggregateEngine {
 public:
  virtual const DeviceInfo& device() const = 0;
  virtual ColumnCache& column_cache() = 0;
  // The engine of one device: where work that is not spread over devices
  // runs (ordered-set aggregates, whose rows a device keeps and sorts over
  // its own column cache). Itself, except for MultiDeviceEngine.
  virtual GpuEngine& primary() { return *this; }
  // Reads the tuning store's records of this engine's devices now (tallyd's
  // start, once the store is installed) instead of on the first query's
  // path, where the read took over a millisecond; chunk_rows: the stored
  // chunks' rows (Config::chunk_rows), the size the cached shapes are
  // rehearsed at.
  virtual void preload_tuning(tally::TuningStore* store, int64_t chunk_rows) = 0;
  bool note_left_elsewhere(uint64_t table) override;

 private:
  std::mutex left_mutex_;
  std::unordered_set<uint64_t> left_elsewhere_;  // bounded: cleared when it grows past kMaxLeftTables
  static constexpr size_t kMaxLeftTables = 4096;
};

// The engine for device `ordinal` (-1 = first device); nullptr when this build
// has no CUDA, no device exists, or the GPU was marked unusable.
std::unique_ptr<GpuEngine> make_gpu_engine(int ordinal = -1, const GpuEngineOptions& options = {});

}  // namespace tally::gpu
