#pragma once
// TuningStoreCatalog: the engines' TuningStore (common/tuning_store.hpp) over
// the catalog's persisted tuning cache (catalog/tuning_cache.hpp). The catalog
// keeps records as opaque text; this store reads them as the GPU tuner's
// launch configurations and search states, and merges a query's measurement
// into what is stored. Thread-safe: sessions run queries in parallel threads;
// one query's store() of a key is serialized against another's, so
// observations are never lost.
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog/tuning_cache.hpp"
#include "common/tuning_store.hpp"

namespace tally::executor {

class TuningStoreCatalog final : public TuningStore {
 public:
  // `cache` is not owned and outlives the store.
  explicit TuningStoreCatalog(catalog::TuningCache& cache) : cache_(cache) {}

  // Records whose configuration or search state does not parse are left out
  // (a later query overwrites them).
  std::vector<TuningRecord> load(const std::string& device, const std::string& signature, int bucket) override;
  // Merges into the stored record of the key (merged_record). A record whose
  // search state does not parse or holds no measurement is a programming
  // error: Error(XX000).
  void store(const TuningRecord& record) override;
  std::vector<TuningRecord> all() override;
  // all() reads every entry of the cache: a key it lacks is not stored.
  bool lists() const override { return true; }

 private:
  catalog::TuningCache& cache_;
  std::mutex store_mutex_;
};

// Whether a stored record's configuration and search state parse.
bool readable(const TuningRecord& record);

// What to store after a query reports `incoming` for a key that holds `stored`
// (nullopt: nothing, or nothing readable); nullopt = keep `stored` as it is.
// One more observation; the best is
// the incoming search's measured choice, except that
//  * an open measurement (no finished one yet) is stored as source
//    "measuring" and never replaces a measured best;
//  * a faster configuration stored earlier and not re-measured by this query
//    stays the best (a re-measured one that got slower means the data changed).
// Throws Error(XX000) when `incoming` has no usable search state.
std::optional<TuningRecord> merged_record(const std::optional<TuningRecord>& stored, const TuningRecord& incoming);

// Opens the tuning cache in the catalog's SQLite file `catalog_path` with a
// connection of its own (the catalog's stays free for DDL; SQLite serializes
// the writes), wraps it in a TuningStoreCatalog kept for the life of the
// process, and makes it process_tuning_store(). Idempotent for the same path.
// tallyd calls it once after opening the catalog. Throws Error(58030) when the
// file cannot be opened.
TuningStore* install_process_tuning_store(const std::string& catalog_path);

}  // namespace tally::executor
