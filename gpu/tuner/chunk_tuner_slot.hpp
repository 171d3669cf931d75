#pragma once
// ChunkTuner's per-variant state, shared by chunk_tuner.cpp and race_screen.cpp.
#include <optional>
#include <string>

#include "gpu/rules/variant_config.hpp"
#include "gpu/tuner/chunk_tuner.hpp"
#include "gpu/tuner/damon_search.hpp"

namespace tally::gpu {

// One usable variant: its grid, its rule start, and its search (continued
// from the cache when the cache has one).
struct ChunkTuner::Slot {
  Variant variant = Variant::global_hash;
  VariantConfig base;        // gpu/'s default for the parameters the tuner does not search
  LaunchConfig start;        // the cold-start rule's configuration, on the grid
  std::optional<DamonSearch> search;
  bool cached = false;       // the cache had a measured entry
  int64_t observations = 0;  // as loaded
  bool explored = false;     // measured as exploration (vw-greedy) or raced beside a known variant
  bool touched = false;      // measured in this query
  bool worth_measuring = true;  // raced on a cold cache and explored by vw-greedy (worth_measuring())
  size_t measured_at_explore = 0;
  long explore_chunks = 0;
  bool screen_passed = false;  // its race screen did not end it: measured on whole chunks
  bool screened = false;       // left the race on its screen
  double screen_share = 0;     // the share of a chunk its race screen runs on (ChunkTuner::screen_share_for)

  std::optional<double> best_time() const { return search->best_seconds_per_row(); }
};

}  // namespace tally::gpu
