#pragma once
// Synthetic configuration spaces for the tuner's tests: a time per row for
// every grid point, shaped like the DaMoN'19 paper's Figure 5 (a bowl in log
// threads x log blocks with plateaus along the constant-thread diagonals),
// plus measurement noise and outliers.
#include <cmath>
#include <functional>
#include <map>
#include <random>

#include "gpu/tuner/damon_search.hpp"

namespace tally::gpu::testing {

// 11 x 11 grid like the paper: threads per block 1..1024, blocks per SM 1..1024.
inline SearchSpace paper_grid() {
  return SearchSpace({{ConfigDimension::threads_per_block, SearchSpace::powers_of_two(1, 1024)},
                      {ConfigDimension::blocks_per_sm, SearchSpace::powers_of_two(1, 1024)}});
}

using TimeFunction = std::function<double(const LaunchConfig&)>;

inline double lg(int v) { return std::log2(static_cast<double>(v)); }

// Convex bowl with its minimum at (tpb_opt, bps_opt).
inline TimeFunction bowl(int tpb_opt, int bps_opt, double curvature = 0.08) {
  return [=](const LaunchConfig& c) {
    const double dx = lg(c.threads_per_block) - lg(tpb_opt);
    const double dy = lg(c.blocks_per_sm) - lg(bps_opt);
    return 1e-9 * (1.0 + curvature * (dx * dx + dy * dy));
  };
}

struct Exhaustive {
  LaunchConfig best;
  double best_time = INFINITY;
};
inline Exhaustive exhaustive(const SearchSpace& space, const TimeFunction& f) {
  Exhaustive e;
  for (const auto& c : space.all()) {
    if (f(c) < e.best_time) {
      e.best_time = f(c);
      e.best = c;
    }
  }
  return e;
}

struct RunResult {
  LaunchConfig found;
  double found_time = 0;   // true (noise-free) time of the found configuration
  long chunks = 0;         // chunks until convergence
  size_t tested = 0;       // configurations measured
};

// Drives the search chunk by chunk with multiplicative Gaussian noise and
// an optional outlier factor on the first chunk each configuration runs.
inline RunResult drive(DamonSearch& search, const TimeFunction& f, double noise = 0.0, double first_chunk_outlier = 1.0,
                       uint64_t seed = 1, long max_chunks = 100'000) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::map<LaunchConfig, int> runs;
  while (!search.converged() && search.chunks() < max_chunks) {
    const LaunchConfig c = search.next_configuration();
    double t = f(c) * (1.0 + noise * gauss(rng));
    if (runs[c]++ == 0) t *= first_chunk_outlier;
    search.report(c, t);
  }
  return {search.best(), f(search.best()), search.chunks(), search.configurations_tested()};
}

}  // namespace tally::gpu::testing
