#include "gpu/tuner/vw_greedy.hpp"

#include <stdexcept>

namespace tally::gpu {

std::string_view choice_reason_name(ChoiceReason reason) {
  switch (reason) {
    case ChoiceReason::rule: return "rule";
    case ChoiceReason::cache: return "cache";
    case ChoiceReason::explore: return "explored";
  }
  return "?";
}

VwGreedy::VwGreedy(double explore_rate, uint64_t seed) : explore_rate_(explore_rate), rng_(seed) {}

VariantChoice VwGreedy::choose(const std::vector<VariantStats>& pool) {
  if (pool.empty()) throw std::invalid_argument("VwGreedy::choose: empty variant pool");
  // Initial exploration: the first unmeasured variant in rule order.
  size_t best = pool.size();
  for (size_t i = 0; i < pool.size(); ++i) {
    if (!pool[i].best_seconds_per_row) {
      // Only the rules' first choice counts as "rule"; later ones are exploration.
      bool any_measured = false;
      for (const auto& v : pool) any_measured = any_measured || v.best_seconds_per_row.has_value();
      return {pool[i].variant, any_measured ? ChoiceReason::explore : ChoiceReason::rule};
    }
    if (best == pool.size() || *pool[i].best_seconds_per_row < *pool[best].best_seconds_per_row) best = i;
  }
  if (pool.size() > 1 && std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < explore_rate_) {
    size_t other = std::uniform_int_distribution<size_t>(0, pool.size() - 2)(rng_);
    if (other >= best) ++other;
    return {pool[other].variant, ChoiceReason::explore};
  }
  return {pool[best].variant, ChoiceReason::cache};
}

}  // namespace tally::gpu
