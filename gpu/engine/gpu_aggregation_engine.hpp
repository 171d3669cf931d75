#pragma once
// The GPU engine object: one device, its column cache, a pool of chunk
// pipelines, and the tuning records this process knows (read from the
// store once, kept in memory, written back by a writer thread off every
// query's path). Each query's work is a GpuRun (gpu_run.hpp).
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gpu/engine/gpu_engine.hpp"
#include "gpu/engine/pooled_pipeline.hpp"
#include "gpu/tuner/chunk_tuner.hpp"

namespace tally::gpu {

class GpuAggregationEngine final : public GpuEngine {
 public:
  GpuAggregationEngine(DeviceInfo device, uint64_t cache_bytes, config::TuningConfig tuning)
      : device_(std::move(device)), cache_(device_.ordinal, cache_bytes), tuning_(tuning),
        fingerprint_(device_.fingerprint()) {}
  const config::TuningConfig& tuning() const { return tuning_; }
  std::string name() const override { return "gpu"; }
  const DeviceInfo& device() const override { return device_; }
  ColumnCache& column_cache() override { return cache_; }
  bool keeps(const tally::ColumnIdentity& column) const override {
    return cache_.contains(column.table, column.chunk, column.column);
  }
  bool can_run(const tally::AggregationSpec& spec) const override;
  std::unique_ptr<tally::AggregationRun> start(const tally::AggregationSpec& spec) override;
  std::unique_ptr<tally::ScanSelectionRun> start_selection(const tally::ScanSelectionSpec& spec) override;
  uint64_t keep(const tally::KeptChunk& chunk) override;  // column_keep.cpp

  // Pipelines (streams, events, pinned buffers) are reused across queries:
  // creating pinned memory costs milliseconds. Scan selections (a piece
  // each, on every worker at once) take theirs from a pool of their own:
  // drawn from the aggregations' pool, they would leave it full of
  // pipelines without a spare aggregator, and a repeated aggregation would
  // build its table again instead of reusing it.
  enum class PipelineUse { aggregation, selection };
  PooledPipeline acquire_pipeline(PipelineUse use = PipelineUse::aggregation);
  // The latest records this process measured for a key (device, signature,
  // bucket), ahead of the store: the next query needs neither the SQLite
  // read nor to wait for the write, which a background thread does. A
  // finished query's tuner is handed over as it is (finish_tuning): its
  // records (JSON) are made by the writer thread, or here by the next query
  // on the same key if it comes first, never on a query's own critical path.
  std::optional<std::vector<tally::TuningRecord>> recent_records(const std::string& key);
  // The records for a tuning key: this process's latest, else the store's.
  // The first look-up of a store reads all of this device's records from it
  // at once, so later queries (a restarted server's first query on a key
  // included) find theirs in memory, with no SQLite read on their path.
  std::vector<tally::TuningRecord> records_for(const std::string& key, tally::TuningStore* store,
                                                  const std::string& signature, int bucket, int64_t chunk_rows);

  // Hands a finished query's tuner to the writer thread, which makes and
  // persists its records.
  void finish_tuning(std::string key, tally::TuningStore* store, ChunkTuner tuner);
  // With the query lock held: starts the writer thread on first use (at
  // idle priority: it must never take a core from a query) and wakes it.
  void wake_writer();
  ~GpuAggregationEngine() override;

  // Reads the store's records of this device into recent_, once per store,
  // and prepares their shapes off the query path (rehearse()); chunk_rows:
  // the rows of the calling query's chunks (the table options' launch size).
  // tallyd calls it at start; records_for() on a query's path where it did not.
  void preload_tuning(tally::TuningStore* store, int64_t chunk_rows) override;

  // Creates a pipeline (streams, events; the CUDA context with them) for the
  // pool at start-up, so the first query does not, and the memory the first
  // queries would otherwise map (start_up.hpp).
  void warm();

  const std::string& fingerprint() const { return fingerprint_; }

  // mutex_ as a query thread takes it: spinning a while before sleeping,
  // since what holds it is short (a look-up, a queue push, the writer's
  // bookkeeping) and a thread that sleeps on the futex may come back tens of
  // microseconds later.
  std::unique_lock<std::mutex> query_lock();

  void release_pipeline(PooledPipeline p, PipelineUse use = PipelineUse::aggregation);

 private:
  DeviceInfo device_;
  ColumnCache cache_;
  config::TuningConfig tuning_;
  std::string fingerprint_;  // device_.fingerprint(), the tuning cache's device key
  std::mutex mutex_;
  std::set<tally::TuningStore*> preloaded_;
  std::set<tally::TuningStore*> listed_;  // preloaded and listed complete: a key it lacks is absent
  std::vector<PooledPipeline> idle_;            // for aggregations
  std::vector<PooledPipeline> idle_selections_;  // for scan selections
  // keep() one chunk at a time: its look at the cache's room must hold
  // until its columns are in (pg_prewarm reads chunks on every worker).
  std::mutex keep_mutex_;
  std::map<std::string, std::vector<tally::TuningRecord>> recent_;
  std::deque<std::pair<tally::TuningStore*, tally::TuningRecord>> writes_;
  struct FinishedTuner {
    std::string key;
    tally::TuningStore* store;
    ChunkTuner tuner;
  };
  std::deque<FinishedTuner> finished_;  // tuners whose records are not made yet
  // Makes a finished tuner's records: kept in recent_ and queued for the
  // store. Called with mutex_ held.
  void absorb(FinishedTuner& f);
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread writer_;
  std::thread preparser_;  // preload_tuning()'s parse of the loaded search states
  std::thread rehearser_;  // preload_tuning()'s rehearsal of the cached shapes

  // What the first query of each cached shape would build first in this
  // process, done before it comes (start_up.hpp rehearse_aggregation): per
  // signature and bucket of this device, its fastest cached variant at its
  // best configuration, with NOT NULL and with nullable value columns (the
  // signature does not say which the query has). Bounded in work and memory:
  // at most kMaxRehearsals aggregations of kRehearsalRows rows, buckets up to
  // kMaxRehearsalBucket.
  static constexpr int kMaxRehearsals = 8;
  static constexpr int64_t kRehearsalRows = int64_t{1} << 22;  // 16-32 MB per column, ~1 ms of copies
  static constexpr int kMaxRehearsalBucket = 24;                // a table of 2^24 groups, as a query's
  void rehearse(const std::vector<tally::TuningRecord>& records, int64_t chunk_rows);

  void write_loop();
  // Best effort: the writer thread at idle priority, so that it never takes
  // a core from a query.
  static void background_priority();
};

// A pipeline of one of the engine's pools, given back however the scope ends.
struct PipelineLease {
  using Use = GpuAggregationEngine::PipelineUse;
  GpuAggregationEngine& engine;
  Use use;
  PooledPipeline pooled;
  PipelineLease(GpuAggregationEngine& e, Use u) : engine(e), use(u), pooled(e.acquire_pipeline(u)) {}
  ~PipelineLease() { engine.release_pipeline(std::move(pooled), use); }
  PipelineLease(const PipelineLease&) = delete;
  PipelineLease& operator=(const PipelineLease&) = delete;
};

}  // namespace tally::gpu
