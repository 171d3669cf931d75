#pragma once
// VwGreedy: the variant choice across queries (Rosenfeld et al., ADMS'15,
// "vw-greedy"): variants never measured for this (device, operator,
// cardinality bucket) are measured first, in the cold-start rules' order;
// afterwards each query exploits the variant with the best cached time per
// row, except that with probability explore_rate it explores another variant
// of the working pool, so the cache keeps improving and follows data changes.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace tally::gpu {

enum class ChoiceReason { rule, cache, explore };
std::string_view choice_reason_name(ChoiceReason reason);

struct VariantStats {
  std::string variant;
  std::optional<double> best_seconds_per_row;  // from the tuning cache
  int64_t observations = 0;
};

struct VariantChoice {
  std::string variant;
  ChoiceReason reason = ChoiceReason::rule;
};

class VwGreedy {
 public:
  VwGreedy(double explore_rate, uint64_t seed = std::random_device{}());

  // `pool` lists the usable variants in the rules' order (the working pool).
  // Precondition: pool is not empty.
  VariantChoice choose(const std::vector<VariantStats>& pool);

 private:
  double explore_rate_;
  std::mt19937_64 rng_;
};

}  // namespace tally::gpu
