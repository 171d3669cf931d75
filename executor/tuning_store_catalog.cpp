#include "executor/tuning_store_catalog.hpp"

#include <memory>

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "gpu/tuner/launch_config.hpp"
#include "gpu/tuner/search_state_json.hpp"

namespace tally::executor {

namespace {

std::optional<gpu::SearchState> parse_search(const std::string& text) {
  return gpu::search_state_from_json(nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false));
}

bool known_source(const std::string& s) {
  return s == "rule" || s == "search" || s == "explored" || s == "measuring";
}

std::vector<TuningRecord> readable_only(std::vector<TuningRecord> records) {
  std::erase_if(records, [](const TuningRecord& r) { return !readable(r); });
  return records;
}

}  // namespace

bool readable(const TuningRecord& r) {
  return gpu::parse_launch_config(r.best_config).has_value() && known_source(r.source) &&
         parse_search(r.search_state).has_value();
}

std::optional<TuningRecord> merged_record(const std::optional<TuningRecord>& stored, const TuningRecord& incoming) {
  const auto search = parse_search(incoming.search_state);
  const auto choice = search ? gpu::recorded_choice(*search) : std::nullopt;
  // A state with no best is stored while a measurement is open (source
  // measuring, ChunkTuner::records); anything else without a choice is a bug.
  if (!choice) {
    throw Error(SqlState::internal_error,
                "tuning store: record for " + incoming.variant + " has no usable search state");
  }
  TuningRecord out = incoming;
  out.best_config = gpu::to_string(choice->config);
  out.seconds_per_row = choice->seconds_per_row;
  out.source = choice->open ? "measuring" : (known_source(incoming.source) ? incoming.source : "search");
  out.observations = 1;
  out.updated_at.clear();
  if (!stored || !readable(*stored)) return out;
  const auto stored_search = parse_search(stored->search_state);
  if (choice->open && stored_search->best) return std::nullopt;  // a measured best is worth more than an open measurement
  out.observations = stored->observations + 1;
  // A faster configuration measured earlier (e.g. in a query that explored
  // more) stays the best unless this query re-measured it. (An open
  // measurement's time is no such configuration.)
  const auto stored_best = gpu::parse_launch_config(stored->best_config);
  if (stored->source != "measuring" && *stored_best != choice->config && stored->seconds_per_row < out.seconds_per_row &&
      !search->measured.count(*stored_best)) {
    out.best_config = stored->best_config;
    out.seconds_per_row = stored->seconds_per_row;
    out.source = stored->source;
  }
  return out;
}

std::vector<TuningRecord> TuningStoreCatalog::load(const std::string& device, const std::string& signature, int bucket) {
  return readable_only(cache_.find_variants(device, signature, bucket));
}

std::vector<TuningRecord> TuningStoreCatalog::all() { return readable_only(cache_.entries()); }

void TuningStoreCatalog::store(const TuningRecord& r) {
  std::lock_guard lock(store_mutex_);  // find + put as one step
  if (auto merged = merged_record(cache_.find(r.device, r.signature, r.variant, r.bucket), r)) cache_.put(*merged);
  count(engine_counters().tuning_cache_writes);
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

}  // namespace tally::executor
