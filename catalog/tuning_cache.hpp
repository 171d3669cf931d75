#pragma once
// TuningCache: what the tuner learned, per device, persisted in the catalog's
// SQLite database (table tally_tuning_cache) so it survives restarts.
//   key:   device fingerprint (name, compute capability, SM count, memory,
//          driver: DeviceProperties::fingerprint) x operator signature (key
//          types and width, aggregate set) x variant x cardinality bucket
//          (floor(log2(estimated groups)))
//   value: best launch configuration, its time per row, observation count,
//          where it came from, and the search state (measured grid, queue,
//          path) needed to continue the search in a later query.
// Lookups always include the device fingerprint, so an entry measured on
// another GPU (or driver) is never used as this one's. Thread-safe.
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/tuner/damon_search.hpp"
#include "gpu/tuner/launch_config.hpp"

struct sqlite3;

namespace tally::catalog {

// floor(log2(groups)), 0 for groups <= 1: the cache's cardinality bucket.
int cardinality_bucket(double estimated_groups);

// "keys=int4,text;width=12;aggs=count,sum(int8)": key types in GROUP BY
// order, packed key width in bytes, and the aggregate set (sorted, so the
// order of the select list does not matter).
std::string operator_signature(const std::vector<std::string>& key_types, int key_width_bytes,
                               std::vector<std::string> aggregates);

struct TuningKey {
  std::string device;              // DeviceProperties::fingerprint()
  std::string operator_signature;
  std::string variant;             // gpu/tuner/cold_start_rules.hpp names
  int cardinality_bucket = 0;
};

// Where the entry's configuration came from (EXPLAIN ANALYZE's "source");
// measuring: no measurement finished yet (a short query's open one, continued
// by the next query), its time the median of the launches so far.
enum class TuningSource { rule, search, explored, measuring };
std::string_view tuning_source_name(TuningSource source);
// The source a name stands for; nullopt for any other text.
std::optional<TuningSource> tuning_source_from_name(std::string_view name);

struct TuningEntry {
  TuningKey key;
  gpu::LaunchConfig best;
  double seconds_per_row = 0;
  int64_t observations = 0;        // queries that reported into this entry
  TuningSource source = TuningSource::search;
  gpu::SearchState search;         // to continue the search
  std::string updated_at;          // UTC, set by the cache
};

class TuningCache {
 public:
  // Uses the catalog's open connection (not owned); creates the table if needed.
  explicit TuningCache(sqlite3* db);
  // Opens (creating) the SQLite database file at `path` with its own connection.
  static std::unique_ptr<TuningCache> open(const std::string& path);
  ~TuningCache();
  TuningCache(const TuningCache&) = delete;
  TuningCache& operator=(const TuningCache&) = delete;

  // The entry for exactly this key, or nullopt (also when the stored row is
  // unreadable: the search then starts afresh and overwrites it).
  std::optional<TuningEntry> find(const TuningKey& key) const;
  // Every variant's entry for this device, operator and bucket (vw-greedy's pool).
  std::vector<TuningEntry> find_variants(const std::string& device, const std::string& operator_signature,
                                         int cardinality_bucket) const;
  // Inserts or replaces the entry.
  void put(const TuningEntry& entry);
  // Writes back what one query learned: the search's state and best
  // configuration; observations is incremented. A best time slower than the
  // stored one still replaces it when it comes from the same configuration
  // (the data changed), otherwise the faster configuration is kept. A search
  // with no best yet but a measurement open is recorded as `measuring` (its
  // configuration and the median of its times so far), unless the entry has
  // a measured best already, which it then leaves as it is.
  TuningEntry record(const TuningKey& key, const gpu::SearchState& search, TuningSource source);

  // All entries of one device (or of every device when empty), for the SQL
  // view and the admin page.
  std::vector<TuningEntry> entries(const std::string& device = {}) const;
  // Removes one device's entries; returns how many.
  int64_t forget_device(const std::string& device);

 private:
  TuningCache(sqlite3* db, bool owned);
  void create_schema();

  sqlite3* db_;
  bool owned_;
  mutable std::mutex mutex_;
};

// The admin page's JSON: per entry the key, the best configuration, its time
// per row, observations, and the measured grid and tuner path.
nlohmann::json to_json(const TuningEntry& entry);
nlohmann::json to_json(const std::vector<TuningEntry>& entries);

}  // namespace tally::catalog
