#include "server/admin_tuning_source.hpp"

#include <cmath>
#include <utility>

#include "catalog/tuning_cache.hpp"
#include "executor/tuning_store_catalog.hpp"
#include "gpu/tuner/search_state_json.hpp"

namespace tally::server {

nlohmann::json tuning_record_json(const TuningRecord& r) {
  const nlohmann::json state = nlohmann::json::parse(r.search_state, nullptr, /*allow_exceptions=*/false);
  const auto search = gpu::search_state_from_json(state);
  return {{"device", r.device},
          {"operator_signature", r.signature},
          {"variant", r.variant},
          {"cardinality_bucket", r.bucket},
          {"groups_from", r.bucket == 0 ? 0.0 : std::ldexp(1.0, r.bucket)},
          {"groups_to", std::ldexp(1.0, r.bucket + 1)},
          {"best_config", r.best_config},
          {"seconds_per_row", r.seconds_per_row},
          {"observations", r.observations},
          {"source", r.source},
          {"converged", search ? search->converged : false},
          {"chunks_spent", search ? search->chunks : 0},
          {"measured_grid", search ? state.at("measured") : nlohmann::json::array()},
          {"search_path", search ? state.at("path") : nlohmann::json::array()},
          {"updated_at", r.updated_at}};
}

AdminTuningSource::AdminTuningSource(const std::string& catalog_path, nlohmann::json device)
    : cache_(catalog::TuningCache::open(catalog_path)), device_(std::move(device)) {}

AdminTuningSource::~AdminTuningSource() = default;

std::string AdminTuningSource::json() const {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& r : cache_->entries()) {
    if (executor::readable(r)) entries.push_back(tuning_record_json(r));
  }
  nlohmann::json out = {{"device", device_}, {"entries", std::move(entries)}};
  return out.dump();
}

size_t AdminTuningSource::entry_count() const {
  size_t n = 0;
  for (const auto& r : cache_->entries()) n += executor::readable(r);
  return n;
}

}  // namespace tally::server
