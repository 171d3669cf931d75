#pragma once
// The tuning cache's cardinality bucket: floor(log2(estimated groups)), 0 for
// one group or fewer. One definition for gpu/ (ChunkTuner) and catalog/
// (TuningCache), so both sides of the cache key agree.
#include <cmath>

namespace tally::gpu {

inline int cardinality_bucket(double estimated_groups) {
  if (!(estimated_groups > 1.0)) return 0;
  return static_cast<int>(std::floor(std::log2(estimated_groups)));
}

}  // namespace tally::gpu
