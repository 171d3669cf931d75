#pragma once
// TuningCache: what the engines' tuners learned, per device, persisted in the
// catalog's SQLite database (table tally_tuning_cache) so it survives restarts.
// One row per TuningRecord (common/tuning_store.hpp), keyed by device
// fingerprint x operator signature x variant x cardinality bucket. The
// catalog keeps the configuration and the search state as the opaque text the
// tuner wrote: what they mean, and how a new measurement merges with a stored
// one, is the tuning store's business (executor/tuning_store_catalog.hpp).
// Lookups always include the device fingerprint, so an entry measured on
// another GPU (or driver) is never used as this one's. Thread-safe.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/tuning_store.hpp"

struct sqlite3;

namespace tally::catalog {

class TuningCache {
 public:
  // Uses the catalog's open connection (not owned); creates the table if needed.
  explicit TuningCache(sqlite3* db);
  // Opens (creating) the SQLite database file at `path` with its own connection.
  static std::unique_ptr<TuningCache> open(const std::string& path);
  ~TuningCache();
  TuningCache(const TuningCache&) = delete;
  TuningCache& operator=(const TuningCache&) = delete;

  // The record of exactly this key, or nullopt.
  std::optional<TuningRecord> find(const std::string& device, const std::string& signature,
                                   const std::string& variant, int bucket) const;
  // Every variant's record for this device, signature and bucket.
  std::vector<TuningRecord> find_variants(const std::string& device, const std::string& signature,
                                          int bucket) const;
  // Inserts or replaces the record of its key as given (observations
  // included); updated_at becomes now.
  void put(const TuningRecord& record);
  // All records of one device (or of every device when empty), ordered by key.
  std::vector<TuningRecord> entries(const std::string& device = {}) const;
  // Removes one device's records; returns how many.
  int64_t forget_device(const std::string& device);

 private:
  TuningCache(sqlite3* db, bool owned);
  void create_schema();

  sqlite3* db_;
  bool owned_;
  mutable std::mutex mutex_;
};

}  // namespace tally::catalog
