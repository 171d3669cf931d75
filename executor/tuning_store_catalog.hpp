#pragma once
// TuningStoreCatalog: the engines' TuningStore (executor/aggregate_engine.hpp)
// over the catalog's persisted tuning cache (catalog/tuning_cache.hpp), so
// gpu/ reads and writes the cache without including catalog/. Thread-safe:
// sessions run queries in parallel threads; one query's store() of a key is
// serialized against another's, so observations are never lost.
#include <mutex>
#include <string>
#include <vector>

#include "catalog/tuning_cache.hpp"
#include "executor/aggregate_engine.hpp"

namespace tally::executor {

class TuningStoreCatalog final : public TuningStore {
 public:
  // `cache` is not owned and outlives the store.
  explicit TuningStoreCatalog(catalog::TuningCache& cache) : cache_(cache) {}

  std::vector<TuningRecord> load(const std::string& device, const std::string& signature, int bucket) override;
  // Merges like TuningCache::record: one more observation; a faster
  // configuration already stored and not re-measured by this query stays the
  // best. A record whose configuration or search state does not parse is a
  // programming error: Error(XX000).
  void store(const TuningRecord& record) override;
  std::vector<TuningRecord> all() override;
  // all() reads every entry of the cache: a key it lacks is not stored.
  bool lists() const override { return true; }

 private:
  catalog::TuningCache& cache_;
  std::mutex store_mutex_;
};

// Conversions, exposed for the SQL view and tests.
TuningRecord to_tuning_record(const catalog::TuningEntry& entry);

// Opens the tuning cache in the catalog's SQLite file `catalog_path` with a
// connection of its own (the catalog's stays free for DDL; SQLite serializes
// the writes), wraps it in a TuningStoreCatalog kept for the life of the
// process, and makes it process_tuning_store(). Idempotent for the same path.
// tallyd calls it once after opening the catalog. Throws Error(58030) when the
// file cannot be opened.
TuningStore* install_process_tuning_store(const std::string& catalog_path);

}  // namespace tally::executor
