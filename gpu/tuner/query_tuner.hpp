#pragma once
// QueryTuner: the tuner as one aggregation query uses it. It picks the
// variant (vw-greedy over the tuning cache's entries for this device,
// operator and cardinality bucket; cold-start rules when there are none),
// then drives the DaMoN'19 search for that variant chunk by chunk, starting
// from the cached search state when there is one: on a warm cache whose
// search has converged, the cached best configuration runs from the first
// chunk. After the query the caller persists state() in the tuning cache
// (catalog/tuning_cache.hpp; gpu/ stays below catalog/, so this class takes
// and returns plain data).
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "gpu/tuner/cold_start_rules.hpp"
#include "gpu/tuner/damon_search.hpp"
#include "gpu/tuner/device_properties.hpp"
#include "gpu/tuner/vw_greedy.hpp"

namespace tally::gpu {

// What the tuning cache holds for one variant (entries of this device only).
struct CachedVariant {
  std::string variant;
  double best_seconds_per_row = 0;
  int64_t observations = 0;
  SearchState state;
};

struct QueryTunerInput {
  DeviceProperties device;
  AggregationShape shape;
  // Variants gpu/'s can_use predicates allow for this query, most preferred
  // first; empty = rule_variant_order(device, shape).
  std::vector<std::string> usable_variants;
  std::vector<CachedVariant> cached;
  config::TuningConfig tuning;
  // Forces a variant (e.g. a test or SET tally.variant); empty = choose.
  std::string forced_variant;
  uint64_t seed = 0x5EED;
};

// The grid searched for a variant on a device: threads per block 32..max
// (powers of two), blocks per SM 1..max resident blocks, rows per thread
// 1..8, and fill factor 25/50/83 % for the shared-memory hash variants
// (shared_memory, partitioned). Dimensions a variant's time does not depend
// on are left out: their value comes from the space's base.
SearchSpace default_search_space(const DeviceProperties& device, const std::string& variant);

class QueryTuner {
 public:
  explicit QueryTuner(const QueryTunerInput& input);

  const std::string& variant() const { return variant_; }
  ChoiceReason reason() const { return reason_; }
  LaunchConfig next_configuration();
  void report(const LaunchConfig& config, double seconds_per_row);
  const SearchState& state() const { return search_.state(); }
  bool converged() const { return search_.converged(); }
  // One line for EXPLAIN ANALYZE: variant, source, configuration, search progress.
  std::string explain() const;

  struct Choice {
    std::string variant;
    ChoiceReason reason;
    const CachedVariant* cached;
  };

 private:
  QueryTuner(const QueryTunerInput& input, const Choice& choice);

  std::string variant_;
  ChoiceReason reason_ = ChoiceReason::rule;
  bool refine_ = true;
  DamonSearch search_;
};

}  // namespace tally::gpu
