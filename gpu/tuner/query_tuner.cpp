#include "gpu/tuner/query_tuner.hpp"

#include <algorithm>
#include <stdexcept>

namespace tally::gpu {

namespace {

// Variants whose kernels keep a hash table in shared memory: the only ones
// whose time depends on the fill factor. Dense and sort have no hash table; the
// global table's fill factor changed no H100 cell by more than 0.6 % (bench/
// tuner/RESULTS.md), so searching it would triple the global grid for nothing.
bool fill_factor_matters(const std::string& v) { return v == kVariantShared || v == "partitioned"; }

using Choice = QueryTuner::Choice;

Choice choose(const QueryTunerInput& in) {
  std::vector<std::string> pool = in.usable_variants.empty() ? rule_variant_order(in.device, in.shape) : in.usable_variants;
  if (pool.empty()) throw std::invalid_argument("QueryTuner: no usable variant");
  auto cached_of = [&in](const std::string& v) -> const CachedVariant* {
    for (const auto& c : in.cached) {
      if (c.variant == v) return &c;
    }
    return nullptr;
  };
  if (!in.forced_variant.empty()) {
    return {in.forced_variant, cached_of(in.forced_variant) ? ChoiceReason::cache : ChoiceReason::rule,
            cached_of(in.forced_variant)};
  }
  std::vector<VariantStats> stats;
  for (const auto& v : pool) {
    const CachedVariant* c = cached_of(v);
    stats.push_back({v, c ? std::optional<double>(c->best_seconds_per_row) : std::nullopt, c ? c->observations : 0});
  }
  VwGreedy policy(in.tuning.enabled ? in.tuning.explore_rate : 0.0, in.seed);
  const VariantChoice choice = policy.choose(stats);
  return {choice.variant, choice.reason, cached_of(choice.variant)};
}

DamonSearch make_search(const QueryTunerInput& in, const Choice& choice) {
  SearchSpace space = default_search_space(in.device, choice.variant);
  const SearchParams params = SearchParams::from_config(in.tuning);
  if (choice.cached && (choice.cached->state.best || !choice.cached->state.pending_initial.empty())) {
    return DamonSearch(std::move(space), choice.cached->state, params);
  }
  std::vector<LaunchConfig> initial = probe_configurations(space, rule_launch_config(in.device, in.shape, choice.variant));
  return DamonSearch(std::move(space), std::move(initial), params);
}

}  // namespace

SearchSpace default_search_space(const DeviceProperties& device, const std::string& variant) {
  std::vector<GridAxis> axes = {
      {ConfigDimension::threads_per_block,
       SearchSpace::powers_of_two(std::max(1, device.warp_size), std::max(device.warp_size, device.max_threads_per_block))},
      {ConfigDimension::blocks_per_sm, SearchSpace::powers_of_two(1, std::max(1, device.max_blocks_per_sm))},
      {ConfigDimension::rows_per_thread, {1, 2, 4, 8}}};
  if (fill_factor_matters(variant)) axes.push_back({ConfigDimension::fill_factor_percent, {25, 50, 83}});
  return SearchSpace(std::move(axes));
}

QueryTuner::QueryTuner(const QueryTunerInput& input)
    : QueryTuner(input, choose(input)) {}

QueryTuner::QueryTuner(const QueryTunerInput& input, const Choice& choice)
    : variant_(choice.variant),
      reason_(choice.reason),
      refine_(input.tuning.enabled),
      search_(make_search(input, choice)) {}

LaunchConfig QueryTuner::next_configuration() {
  // Refinement off: run the best known (cached or rule) configuration.
  return refine_ ? search_.next_configuration() : search_.best();
}

void QueryTuner::report(const LaunchConfig& config, double seconds_per_row) {
  if (refine_) search_.report(config, seconds_per_row);
}

std::string QueryTuner::explain() const {
  std::string out = "variant=" + variant_ + " (" + std::string(choice_reason_name(reason_)) + ")";
  out += " config=" + to_string(search_.best());
  const SearchState& s = search_.state();
  out += s.converged ? " search=converged" : " search=running";
  out += " measured=" + std::to_string(s.measured.size()) + " chunks=" + std::to_string(s.chunks);
  return out;
}

}  // namespace tally::gpu
