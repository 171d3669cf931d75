#pragma once
// The tuning cache's cardinality bucket: floor(log2(estimated groups)), 0 for
// one group or fewer: the part of the cache key that groups queries of a
// similar size, so a configuration measured on one serves its neighbours.
#include <cmath>

namespace tally::gpu {

inline int cardinality_bucket(double estimated_groups) {
  if (!(estimated_groups > 1.0)) return 0;
  return static_cast<int>(std::floor(std::log2(estimated_groups)));
}

}  // namespace tally::gpu
