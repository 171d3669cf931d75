#include "gpu/tuner/search_space.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tally::gpu {

SearchSpace::SearchSpace(std::vector<GridAxis> axes, LaunchConfig base) : axes_(std::move(axes)), base_(base) {
  for (auto& axis : axes_) {
    if (axis.values.empty()) throw std::invalid_argument("SearchSpace axis without values");
    std::sort(axis.values.begin(), axis.values.end());
    axis.values.erase(std::unique(axis.values.begin(), axis.values.end()), axis.values.end());
    base_.set(axis.dimension, axis.values.front());
  }
  base_ = snap(base);
}

std::vector<int32_t> SearchSpace::powers_of_two(int32_t min, int32_t max) {
  std::vector<int32_t> out;
  for (int64_t v = 1; v <= max; v *= 2) {
    if (v >= min) out.push_back(static_cast<int32_t>(v));
  }
  return out;
}

int SearchSpace::index_of(size_t axis, int32_t value) const {
  const auto& values = axes_[axis].values;
  const auto it = std::lower_bound(values.begin(), values.end(), value);
  if (it == values.end() || *it != value) return -1;
  return static_cast<int>(it - values.begin());
}

size_t SearchSpace::size() const {
  size_t n = 1;
  for (const auto& axis : axes_) n *= axis.values.size();
  return n;
}

std::vector<LaunchConfig> SearchSpace::all() const {
  std::vector<LaunchConfig> out = {base_};
  for (const auto& axis : axes_) {
    std::vector<LaunchConfig> next;
    for (const auto& c : out) {
      for (int32_t v : axis.values) {
        LaunchConfig d = c;
        d.set(axis.dimension, v);
        next.push_back(d);
      }
    }
    out.swap(next);
  }
  return out;
}

bool SearchSpace::contains(const LaunchConfig& config) const {
  for (size_t a = 0; a < axes_.size(); ++a) {
    if (index_of(a, config.get(axes_[a].dimension)) < 0) return false;
  }
  for (int d = 0; d < kConfigDimensionCount; ++d) {
    const auto dim = static_cast<ConfigDimension>(d);
    const bool searched = std::any_of(axes_.begin(), axes_.end(), [dim](const GridAxis& a) { return a.dimension == dim; });
    if (!searched && config.get(dim) != base_.get(dim)) return false;
  }
  return true;
}

LaunchConfig SearchSpace::snap(const LaunchConfig& config) const {
  LaunchConfig out = base_;  // dimensions that are not searched keep the base's value
  for (const auto& axis : axes_) {
    const double target = std::log(std::max(1, config.get(axis.dimension)));
    int32_t best = axis.values.front();
    for (int32_t v : axis.values) {
      if (std::abs(std::log(v) - target) < std::abs(std::log(best) - target)) best = v;
    }
    out.set(axis.dimension, best);
  }
  return out;
}

std::optional<LaunchConfig> SearchSpace::step_beyond(const LaunchConfig& from, const LaunchConfig& to) const {
  LaunchConfig out = to;
  for (size_t a = 0; a < axes_.size(); ++a) {
    const int i = index_of(a, from.get(axes_[a].dimension));
    const int j = index_of(a, to.get(axes_[a].dimension));
    if (i < 0 || j < 0) return std::nullopt;
    const int k = j + (j - i);
    if (k < 0 || k >= static_cast<int>(axes_[a].values.size())) return std::nullopt;
    out.set(axes_[a].dimension, axes_[a].values[static_cast<size_t>(k)]);
  }
  return out;
}

std::vector<LaunchConfig> SearchSpace::neighbours(const LaunchConfig& config) const {
  std::vector<LaunchConfig> out;
  int tpb_axis = -1, bps_axis = -1;
  for (size_t a = 0; a < axes_.size(); ++a) {
    const auto& values = axes_[a].values;
    const int i = index_of(a, config.get(axes_[a].dimension));
    if (i < 0) continue;
    if (axes_[a].dimension == ConfigDimension::threads_per_block) tpb_axis = static_cast<int>(a);
    if (axes_[a].dimension == ConfigDimension::blocks_per_sm) bps_axis = static_cast<int>(a);
    for (int step : {-1, +1}) {
      const int j = i + step;
      if (j < 0 || j >= static_cast<int>(values.size())) continue;
      LaunchConfig n = config;
      n.set(axes_[a].dimension, values[static_cast<size_t>(j)]);
      out.push_back(n);
    }
  }
  if (tpb_axis >= 0 && bps_axis >= 0) {
    const auto& tv = axes_[static_cast<size_t>(tpb_axis)].values;
    const auto& bv = axes_[static_cast<size_t>(bps_axis)].values;
    const int ti = index_of(static_cast<size_t>(tpb_axis), config.threads_per_block);
    const int bi = index_of(static_cast<size_t>(bps_axis), config.blocks_per_sm);
    for (int step : {-1, +1}) {
      const int tj = ti + step, bj = bi - step;
      if (tj < 0 || bj < 0 || tj >= static_cast<int>(tv.size()) || bj >= static_cast<int>(bv.size())) continue;
      LaunchConfig n = config;
      n.threads_per_block = tv[static_cast<size_t>(tj)];
      n.blocks_per_sm = bv[static_cast<size_t>(bj)];
      out.push_back(n);
    }
  }
  return out;
}

std::vector<LaunchConfig> probe_configurations(const SearchSpace& space, const LaunchConfig& start) {
  const LaunchConfig first = space.snap(start);
  std::vector<LaunchConfig> out = {first};
  for (const auto& axis : space.axes()) {
    if (axis.dimension == ConfigDimension::threads_per_block || axis.dimension == ConfigDimension::blocks_per_sm) continue;
    if (axis.values.size() <= 2) continue;
    const int32_t v = first.get(axis.dimension);
    const int32_t lo = axis.values.front(), hi = axis.values.back();
    LaunchConfig probe = first;
    // Farthest in log scale (the grid is powers of two or fill percentages).
    probe.set(axis.dimension, std::abs(std::log(static_cast<double>(hi) / v)) >= std::abs(std::log(static_cast<double>(v) / lo)) ? hi : lo);
    if (probe != first) out.push_back(probe);
  }
  return out;
}

}  // namespace tally::gpu
