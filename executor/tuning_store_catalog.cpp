#include "executor/tuning_store_catalog.hpp"

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "gpu/tuner/search_state_json.hpp"

namespace tally::executor {

namespace {

// An unknown name is taken as a search's (the store's old default).
catalog::TuningSource source_from(const std::string& s) {
  return catalog::tuning_source_from_name(s).value_or(catalog::TuningSource::search);
}

}  // namespace

TuningRecord to_tuning_record(const catalog::TuningEntry& e) {
  TuningRecord r;
  r.device = e.key.device;
  r.signature = e.key.operator_signature;
  r.variant = e.key.variant;
  r.bucket = e.key.cardinality_bucket;
  r.best_config = gpu::to_string(e.best);
  r.seconds_per_row = e.seconds_per_row;
  r.observations = e.observations;
  r.search_state = gpu::to_json(e.search).dump();
  r.source = std::string(catalog::tuning_source_name(e.source));
  r.updated_at = e.updated_at;
  return r;
}

std::vector<TuningRecord> TuningStoreCatalog::load(const std::string& device, const std::string& signature, int bucket) {
  std::vector<TuningRecord> out;
  for (const auto& e : cache_.find_variants(device, signature, bucket)) out.push_back(to_tuning_record(e));
  return out;
}

std::vector<TuningRecord> TuningStoreCatalog::all() {
  std::vector<TuningRecord> out;
  for (const auto& e : cache_.entries()) out.push_back(to_tuning_record(e));
  return out;
}

TuningStore* install_process_tuning_store(const std::string& catalog_path) {
  // Kept until exit: sessions may hold the pointer while tallyd shuts down.
  struct Installed {
    std::string path;
    std::unique_ptr<catalog::TuningCache> cache;
    std::unique_ptr<TuningStoreCatalog> store;
  };
  static std::mutex mutex;
  static std::vector<std::unique_ptr<Installed>> installed;
  std::lock_guard lock(mutex);
  for (const auto& i : installed) {
    if (i->path == catalog_path) {
      process_tuning_store().store(i->store.get());
      return i->store.get();
    }
  }
  auto i = std::make_unique<Installed>();
  i->path = catalog_path;
  i->cache = catalog::TuningCache::open(catalog_path);
  i->store = std::make_unique<TuningStoreCatalog>(*i->cache);
  TuningStore* store = i->store.get();
  installed.push_back(std::move(i));
  process_tuning_store().store(store);
  return store;
}

void TuningStoreCatalog::store(const TuningRecord& r) {
  const auto json = nlohmann::json::parse(r.search_state, nullptr, /*allow_exceptions=*/false);
  auto state = gpu::search_state_from_json(json);
  // A state with no best is stored while a measurement is open (source
  // measuring, ChunkTuner::records); the cache says no to anything else.
  if (!state || !gpu::recorded_choice(*state)) {
    throw Error(SqlState::internal_error, "tuning store: record for " + r.variant + " has no usable search state");
  }
  const catalog::TuningKey key{r.device, r.signature, r.variant, r.bucket};
  std::lock_guard lock(store_mutex_);  // find + put of record() as one step
  cache_.record(key, *state, source_from(r.source));
  count(engine_counters().tuning_cache_writes);
}

}  // namespace tally::executor
