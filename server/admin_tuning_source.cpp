#include "server/admin_tuning_source.hpp"

#include <utility>

#include "catalog/tuning_cache.hpp"

namespace tally::server {

AdminTuningSource::AdminTuningSource(const std::string& catalog_path, nlohmann::json device)
    : cache_(catalog::TuningCache::open(catalog_path)), device_(std::move(device)) {}

AdminTuningSource::~AdminTuningSource() = default;

std::string AdminTuningSource::json() const {
  nlohmann::json out = {{"device", device_}, {"entries", catalog::to_json(cache_->entries())}};
  return out.dump();
}

size_t AdminTuningSource::entry_count() const { return cache_->entries().size(); }

}  // namespace tally::server
