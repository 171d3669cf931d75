#pragma once
// Sample tuning-cache JSON for the admin tests, shaped like DaMoN'19's Figure 5:
// a time-per-row surface over threads per block x blocks per SM with one
// minimum, and the path a greedy descent takes over it from a start point.
// The path is computed from the surface, so the page must draw what the data
// says, not a fixed picture.
#include <nlohmann/json.hpp>

#include <algorithm>
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
  // true: the tuning cache's own JSON shape (server::tuning_record_json): config strings,
  // two fill factors per cell, path steps with events.
  bool cache_format = false;
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

inline std::string config_text(int tpb, int bps, int ff = 50) {
  return "tpb=" + std::to_string(tpb) + ",bps=" + std::to_string(bps) + ",ff=" + std::to_string(ff) + ",rpt=1";
}

inline bool near_path(const std::vector<std::pair<int, int>>& steps, int tpb, int bps) {
  for (auto [px, py] : steps)
    if (std::abs(std::log2(double(px) / tpb)) + std::abs(std::log2(double(py) / bps)) <= 1) return true;
  return false;
}

inline nlohmann::json sample_entry(const SampleEntry& e) {
  nlohmann::json grid = nlohmann::json::array(), path = nlohmann::json::array();
  auto steps = descent_path(e);
  auto [best_tpb, best_bps] = steps.back();
  double best_t = sample_time(best_tpb, best_bps, e.best_tpb, e.best_bps);
  for (int tpb : sample_tpb)
    for (int bps : sample_bps) {
      if (!e.full_grid && !near_path(steps, tpb, bps)) continue;
      double t = sample_time(tpb, bps, e.best_tpb, e.best_bps);
      if (e.cache_format) {
        // A slower fill factor in the same cell: the page must show the faster one.
        grid.push_back({{"config", config_text(tpb, bps, 50)}, {"seconds_per_row", t}});
        grid.push_back({{"config", config_text(tpb, bps, 83)}, {"seconds_per_row", t * 1.5}});
      } else {
        auto p = grid_point(tpb, bps);
        p["seconds_per_row"] = t;
        grid.push_back(p);
      }
    }
  for (size_t i = 0; i < steps.size(); ++i) {
    auto [tpb, bps] = steps[i];
    if (e.cache_format)
      path.push_back({{"config", config_text(tpb, bps)},
                      {"seconds_per_row", sample_time(tpb, bps, e.best_tpb, e.best_bps)},
                      {"chunks", 3},
                      {"event", i == 0 ? "initial" : "better"}});
    else if (i % 2)  // mix both accepted spellings of a configuration
      path.push_back(config_text(tpb, bps));
    else
      path.push_back(grid_point(tpb, bps));
  }
  if (e.cache_format)
    return {{"device", "Sample GPU|sm_90|132"},
            {"operator_signature", "keys=int4;width=4;aggs=count,sum(int8)"},
            {"variant", e.variant},
            {"cardinality_bucket", e.bucket},
            {"best_config", config_text(best_tpb, best_bps)},
            {"seconds_per_row", best_t},
            {"observations", 4},
            {"source", "search"},
            {"converged", true},
            {"measured_grid", grid},
            {"search_path", path}};
  return {{"signature", "int4 key; sum(int8), count(*)"},
          {"variant", e.variant},
          {"cardinality_bucket", e.bucket},
          {"best", grid_point(best_tpb, best_bps)},
          {"seconds_per_row", best_t},
          {"observations", int(steps.size()) * 3},
          {"grid", grid},
          {"path", path}};
}

// Rows x columns of the entry's heat map: the distinct measured values per axis.
inline size_t grid_area(const SampleEntry& e) {
  auto steps = descent_path(e);
  std::vector<int> xs, ys;
  for (int tpb : sample_tpb)
    for (int bps : sample_bps)
      if (e.full_grid || near_path(steps, tpb, bps)) {
        if (std::find(xs.begin(), xs.end(), tpb) == xs.end()) xs.push_back(tpb);
        if (std::find(ys.begin(), ys.end(), bps) == ys.end()) ys.push_back(bps);
      }
  return xs.size() * ys.size();
}

// Distinct threads x blocks cells an entry measured (what the page colours).
inline size_t measured_cells(const SampleEntry& e) {
  auto steps = descent_path(e);
  size_t n = 0;
  for (int tpb : sample_tpb)
    for (int bps : sample_bps) n += e.full_grid || near_path(steps, tpb, bps);
  return n;
}

inline std::vector<SampleEntry> sample_entries() {
  return {{"shared_memory", 10, 256, 8, 64, 1, true},
          {"global", 20, 512, 4, 32, 32, false},
          {"sort", 16, 128, 2, 1024, 16, true, true}};
}

inline nlohmann::json sample_tuning() {
  nlohmann::json entries = nlohmann::json::array();
  for (auto& e : sample_entries()) entries.push_back(sample_entry(e));
  return {{"device", {{"name", "Sample GPU </script><b>x</b>"}, {"sm_count", 132}, {"compute_capability", "9.0"}}},
          {"entries", entries}};
}

}  // namespace tally::testing_admin
