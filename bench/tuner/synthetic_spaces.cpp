#include "bench/tuner/synthetic_spaces.hpp"

#include <cmath>
#include <random>
#include <string>

#include "gpu/tuner/search_space.hpp"

namespace tally::bench {

namespace {

// Published H100 SXM properties: only used so the cold-start rules have a
// device to reason about when replaying synthetic spaces.
void h100_metadata(RecordedSpaces& s) {
  s.metadata["source"] = "synthetic, shaped like DaMoN'19 Figure 5 (bench/tuner/synthetic_spaces.cpp)";
  s.metadata["device"] = "synthetic H100-like";
  s.metadata["sm_count"] = "132";
  s.metadata["max_threads_per_block"] = "1024";
  s.metadata["max_threads_per_sm"] = "2048";
  s.metadata["max_blocks_per_sm"] = "32";
  s.metadata["shared_memory_per_block"] = std::to_string(227 * 1024);
  s.metadata["shared_memory_per_sm"] = std::to_string(228 * 1024);
  s.metadata["l2_cache_bytes"] = std::to_string(50 * 1024 * 1024);
  s.metadata["global_memory_bytes"] = std::to_string(80ll << 30);
  s.metadata["key_bytes"] = "4";
  s.metadata["state_bytes"] = "16";
}

double log2i(int v) { return std::log2(static_cast<double>(v)); }

}  // namespace

RecordedSpaces synthetic_spaces(const SyntheticOptions& options) {
  RecordedSpaces spaces;
  h100_metadata(spaces);
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  std::normal_distribution<double> gauss(0.0, 1.0);

  const auto tpb = gpu::SearchSpace::powers_of_two(32, 1024);
  const auto bps = gpu::SearchSpace::powers_of_two(1, 32);
  const std::vector<int32_t> fill = {25, 50, 83};
  const std::vector<int32_t> rpt = {1, 2, 4, 8};
  for (const char* variant : {"shared_memory", "global", "sort", "partitioned"}) {
    const bool hashed = std::string(variant) != "sort";
    for (int lg = 0; lg <= options.max_log2_groups; lg += 2) {
      SpaceCell cell{variant, uint64_t{1} << lg, {}};
      // Where the valley lies: total threads per SM (log2) and, along the
      // diagonal, the preferred block size; both drift with the group count
      // as in the paper's Figure 3, with per-cell randomness.
      const double total_opt = 6.5 + 4.0 * u01(rng) - 0.08 * lg;
      const double x_opt = 5.0 + 5.0 * u01(rng);
      const double diagonal_weight = 0.002 + 0.01 * u01(rng);  // small: plateaus along the diagonal
      const double dip_x = 5.0 + 5.0 * u01(rng), dip_y = 5.0 * u01(rng), dip_depth = 0.07 * u01(rng);
      const int fill_opt = lg < 12 ? 0 : lg < 22 ? 1 : 2;
      const double rpt_opt = u01(rng) * 2.0;
      const double base = 1e-11 * (1.0 + 0.15 * lg);
      for (int32_t t : tpb) {
        for (int32_t b : bps) {
          for (int32_t f : hashed ? fill : std::vector<int32_t>{50}) {
            for (int32_t r : rpt) {
              gpu::LaunchConfig c;
              c.threads_per_block = t;
              c.blocks_per_sm = b;
              c.fill_factor_percent = f;
              c.rows_per_thread = r;
              const double x = log2i(t), y = log2i(b);
              const double off = std::max(0.0, std::abs(x + y - total_opt) - 0.5);
              double time = 1.0 + 0.08 * off * off + diagonal_weight * (x - x_opt) * (x - x_opt);
              time *= 1.0 - dip_depth * std::exp(-((x - dip_x) * (x - dip_x) + (y - dip_y) * (y - dip_y)) / 0.5);
              const int fi = f == 25 ? 0 : f == 50 ? 1 : 2;
              time *= 1.0 + 0.03 * (fi - fill_opt) * (fi - fill_opt);
              time *= 1.0 + 0.015 * (log2i(r) - rpt_opt) * (log2i(r) - rpt_opt);
              time *= 1.0 + options.roughness * (u01(rng) - 0.5) * 2.0;  // roughness: many tiny local minima
              const bool outlier = u01(rng) < options.outlier_share;
              auto& reps = cell.times[c];
              for (int k = 0; k < options.repetitions; ++k) {
                double m = base * time * std::max(0.5, 1.0 + options.noise * gauss(rng));
                if (k == 0 && outlier) m *= 1.03 + 0.37 * u01(rng);
                reps.push_back(m);
              }
            }
          }
        }
      }
      spaces.cells.push_back(std::move(cell));
    }
  }
  return spaces;
}

}  // namespace tally::bench
