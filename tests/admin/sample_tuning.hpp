#pragma once
// Sample tuning-cache JSON for the admin tests, shaped like DaMoN'19's Figure 5:
// a time-per-row surface over threads per block x blocks per SM with one
// minimum, and the path a greedy descent takes over it from a start point.
// The path is computed from the surface, so the page must draw what the data
// says, not a fixed picture.
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace tally::testing_admin {

inline const std::vector<int> sample_tpb = {32, 64, 128, 256, 512, 1024};
inline const std::vector<int> sample_bps = {1, 2, 4, 8, 16, 32};

// Seconds per row; minimum at (best_tpb, best_bps), slower away from it.
inline double sample_time(int tpb, int bps, int best_tpb, int best_bps) {
  double dx = std::log2(double(tpb) / best_tpb), dy = std::log2(double(bps) / best_bps);
  return 0.4e-9 * (1 + 0.35 * dx * dx + 0.2 * dy * dy + 0.05 * std::fabs(dx * dy));
}

struct SampleEntry {
  std::string variant;
  int bucket;
  int best_tpb, best_bps;
  int start_tpb, start_bps;
  bool full_grid;  // false: only the cells the path visited (and their neighbours)
};

inline nlohmann::json grid_point(int tpb, int bps) {
  return {{"threads_per_block", tpb}, {"blocks_per_sm", bps}};
}

// Greedy descent over the grid's neighbours (the tuner's basic move).
inline std::vector<std::pair<int, int>> descent_path(const SampleEntry& e) {
  auto index = [](const std::vector<int>& axis, int v) {
    for (size_t i = 0; i < axis.size(); ++i)
      if (axis[i] == v) return int(i);
    return -1;
  };
  int x = index(sample_tpb, e.start_tpb), y = index(sample_bps, e.start_bps);
  std::vector<std::pair<int, int>> path{{sample_tpb[x], sample_bps[y]}};
  while (true) {
    double best = sample_time(sample_tpb[x], sample_bps[y], e.best_tpb, e.best_bps);
    int bx = x, by = y;
    for (auto [dx, dy] : {std::pair{1, 0}, {-1, 0}, {0, 1}, {0, -1}}) {
      int nx = x + dx, ny = y + dy;
      if (nx < 0 || ny < 0 || nx >= int(sample_tpb.size()) || ny >= int(sample_bps.size())) continue;
      double t = sample_time(sample_tpb[nx], sample_bps[ny], e.best_tpb, e.best_bps);
      if (t < best) { best = t; bx = nx; by = ny; }
    }
    if (bx == x && by == y) return path;
    x = bx;
    y = by;
    path.emplace_back(sample_tpb[x], sample_bps[y]);
  }
}

inline nlohmann::json sample_entry(const SampleEntry& e) {
  nlohmann::json grid = nlohmann::json::array(), path = nlohmann::json::array();
  auto steps = descent_path(e);
  for (int tpb : sample_tpb)
    for (int bps : sample_bps) {
      bool near_path = false;
      for (auto [px, py] : steps)
        near_path = near_path || (std::abs(std::log2(double(px) / tpb)) + std::abs(std::log2(double(py) / bps)) <= 1);
      if (!e.full_grid && !near_path) continue;
      auto p = grid_point(tpb, bps);
      p["seconds_per_row"] = sample_time(tpb, bps, e.best_tpb, e.best_bps);
      grid.push_back(p);
    }
  // Mix both accepted spellings of a configuration.
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i % 2) path.push_back("tpb=" + std::to_string(steps[i].first) + ",bps=" + std::to_string(steps[i].second) + ",ff=50,rpt=1");
    else path.push_back(grid_point(steps[i].first, steps[i].second));
  }
  return {{"signature", "int4 key; sum(int8), count(*)"},
          {"variant", e.variant},
          {"cardinality_bucket", e.bucket},
          {"best", grid_point(steps.back().first, steps.back().second)},
          {"seconds_per_row", sample_time(steps.back().first, steps.back().second, e.best_tpb, e.best_bps)},
          {"observations", int(steps.size()) * 3},
          {"grid", grid},
          {"path", path}};
}

inline std::vector<SampleEntry> sample_entries() {
  return {{"shared_memory", 10, 256, 8, 64, 1, true},
          {"global", 20, 512, 4, 32, 32, false},
          {"sort", 16, 128, 2, 1024, 16, true}};
}

inline nlohmann::json sample_tuning() {
  nlohmann::json entries = nlohmann::json::array();
  for (auto& e : sample_entries()) entries.push_back(sample_entry(e));
  return {{"device", {{"name", "Sample GPU </script><b>x</b>"}, {"sm_count", 132}, {"compute_capability", "9.0"}}},
          {"entries", entries}};
}

}  // namespace tally::testing_admin
