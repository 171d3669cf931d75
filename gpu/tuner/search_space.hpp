#pragma once
// SearchSpace: the grid the tuner searches for one aggregation variant — one
// list of allowed values per ConfigDimension it varies (threads per block and
// blocks per SM as powers of two, DaMoN'19 section 3.5, plus the variant's own
// parameters), and the neighbourhood Algorithm 1 walks.
#include <functional>
#include <optional>
#include <vector>

#include "gpu/tuner/launch_config.hpp"

namespace tally::gpu {

struct GridAxis {
  ConfigDimension dimension;
  std::vector<int32_t> values;  // ascending; neighbours are adjacent entries
};

class SearchSpace {
 public:
  // `base` gives the values of the dimensions that are not searched.
  SearchSpace(std::vector<GridAxis> axes, LaunchConfig base = {});

  // threads per block and blocks per SM from `min` to `max`, powers of two.
  static std::vector<int32_t> powers_of_two(int32_t min, int32_t max);

  const std::vector<GridAxis>& axes() const { return axes_; }
  const LaunchConfig& base() const { return base_; }
  // Every configuration of the grid (the exhaustive search the replay
  // benchmark compares against).
  std::vector<LaunchConfig> all() const;
  size_t size() const;
  bool contains(const LaunchConfig& config) const;
  // The grid point nearest to `config` (each axis snapped to its nearest value
  // in log scale; dimensions that are not searched take the base's value).
  LaunchConfig snap(const LaunchConfig& config) const;

  // One step along each axis, and along the diagonal of the thread plane that
  // keeps the total thread count (threads x2 with blocks /2 and back): the
  // paper's Figure 5 shows plateaus along these anti-diagonals.
  std::vector<LaunchConfig> neighbours(const LaunchConfig& config) const;
  // The grid point one more step from `from` through `to` (to + (to - from)
  // in grid indices), or nullopt when it leaves the grid.
  std::optional<LaunchConfig> step_beyond(const LaunchConfig& from, const LaunchConfig& to) const;

 private:
  int index_of(size_t axis, int32_t value) const;

  std::vector<GridAxis> axes_;
  LaunchConfig base_;
};

// The initial configurations of a search from `start`: start itself, then for
// each searched variant parameter (every axis but threads per block and
// blocks per SM) with more than two values, start with that parameter at the
// value farthest from start's. A gradient step from start only sees the next
// value of each parameter; the sort variant's rows-per-thread axis is not
// convex (rpt 8 can be 2x faster than rpt 1 with rpt 2 and 4 slower), so one
// probe at the far end lets Algorithm 1 start from either side.
std::vector<LaunchConfig> probe_configurations(const SearchSpace& space, const LaunchConfig& start);

}  // namespace tally::gpu
