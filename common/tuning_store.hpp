#pragma once
// The seam between the aggregation engines and where their measurements are
// kept: an engine loads and stores TuningRecords through a TuningStore; the
// executor implements the store over the catalog's tuning cache
// (executor/tuning_store_catalog.hpp), which keeps the records as opaque text.
// Neither the catalog nor the engines include each other.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace tally {

// One entry of the per-device tuning cache: plain data. Key: device x
// signature x variant x bucket.
struct TuningRecord {
  std::string device;          // the GPU's fingerprint (name, cc, SMs, memory, driver)
  std::string signature;       // operator signature: key width, value widths, aggregate set
  std::string variant;         // "dense", "shared_memory", "global", "sort", "partitioned"
  int bucket = 0;              // floor(log2(estimated groups)), 0 for <= 1 group
  std::string best_config;     // launch configuration, text form "tpb=256,bps=4,ff=50,rpt=1"
  double seconds_per_row = 0;  // measured time per row of best_config
  int64_t observations = 0;    // queries that reported into this entry (load: as stored; store: ignored,
                               // the store counts one more per store())
  std::string search_state;    // JSON of the tuner's search state: lets a later query continue the search
  std::string source;          // "rule", "search", "explored" or "measuring" (no measurement finished yet)
  std::string updated_at;      // UTC, set by the store (load only)
};

// Where an engine loads and stores tuning records. Implementations are
// thread-safe: sessions run queries in parallel threads.
class TuningStore {
 public:
  virtual ~TuningStore() = default;
  // Every variant's record for this device, signature and bucket (records of
  // other devices are never returned).
  virtual std::vector<TuningRecord> load(const std::string& device, const std::string& signature, int bucket) = 0;
  // Inserts or updates the record of its key.
  virtual void store(const TuningRecord& record) = 0;
  // Every record of every device (the tally_tuning_cache view); empty when
  // the store cannot list.
  virtual std::vector<TuningRecord> all() { return {}; }
  // Whether all() lists every record the store holds, so that a key absent
  // from its answer is absent from the store, an empty answer included (a
  // cache that was empty when the engine first listed it). An engine then
  // answers such a key without load(): no read on a query's path. false (the
  // default): all() may be empty or partial; keys are read with load().
  virtual bool lists() const { return false; }
};

// The process's tuning store: tallyd installs it once at start-up
// (executor/tuning_store_catalog.hpp: install_process_tuning_store) and the
// planner copies it into AggregationSpec::tuning_store; nullptr = none (no
// catalog, unit tests).
inline std::atomic<TuningStore*>& process_tuning_store() {
  static std::atomic<TuningStore*> store{nullptr};
  return store;
}

}  // namespace tally
