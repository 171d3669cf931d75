#pragma once
// Synthetic search spaces shaped like DaMoN'19 Figure 5 (a near-convex bowl
// over log threads per block x log blocks per SM whose valley runs along the
// constant-total-threads diagonal, forming plateaus; a second local minimum
// elsewhere; per-configuration roughness of about 1 % that makes many tiny
// local minima), plus fill-factor and rows-per-thread axes, measurement noise
// (0.4 % like the paper's NVIDIA GPUs) and start-up outliers on a quarter of
// the configurations. Used until spaces recorded on the H100 are committed.
#include <cstdint>

#include "bench/tuner/recorded_space.hpp"

namespace tally::bench {

struct SyntheticOptions {
  uint64_t seed = 2019;
  int repetitions = 5;       // chunks recorded per configuration
  int max_log2_groups = 26;  // G = 2^0, 2^2, ..., 2^26
  double noise = 0.004;      // relative standard deviation of one chunk's time
  double roughness = 0.01;   // +- per-configuration deviation from the smooth shape
  double outlier_share = 0.25;  // configurations whose first chunk is 3..40 % slow
};

RecordedSpaces synthetic_spaces(const SyntheticOptions& options = {});

}  // namespace tally::bench
