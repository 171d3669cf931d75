#pragma once
// Where the admin endpoint's /tuning, /tuning/page and the
// tally_tuning_cache_entries metric read the tuning cache from: the catalog's
// SQLite database (catalog/tuning_cache.hpp), through a connection of its own
// so that a scrape never waits on the catalog's or the tuner's connection
// (WAL lets it read while they write). Every device's entries are shown, each
// with its device fingerprint; `device` describes the GPU this tallyd uses.
#include <cstddef>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "common/tuning_store.hpp"

namespace tally::catalog {
class TuningCache;
}

namespace tally::server {

// One record as /tuning shows it: the key, the best configuration, its time
// per row, observations, and the tuner's measured grid and search path.
nlohmann::json tuning_record_json(const TuningRecord& record);

class AdminTuningSource {
 public:
  // Opens the tuning cache in the SQLite file `catalog_path` (creating its
  // table when absent). `device`: an object of this tallyd's GPU properties,
  // or null without one. Throws std::runtime_error when the file cannot be opened.
  AdminTuningSource(const std::string& catalog_path, nlohmann::json device);
  ~AdminTuningSource();
  AdminTuningSource(const AdminTuningSource&) = delete;
  AdminTuningSource& operator=(const AdminTuningSource&) = delete;

  // {"device": ..., "entries": [tuning_record_json(record), ...]}: what
  // /tuning answers (schema in server/admin_tuning_page.hpp); records that do
  // not parse are left out.
  std::string json() const;
  // Entries of every device.
  size_t entry_count() const;

 private:
  std::unique_ptr<catalog::TuningCache> cache_;
  nlohmann::json device_;
};

}  // namespace tally::server
