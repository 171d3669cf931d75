// Tuner replay benchmark (the DaMoN'19 evaluation method): runs the tuner on
// recorded configuration spaces — every configuration of every variant per
// group count, several chunk repetitions each — feeding it the recorded
// chunk times in the order they were measured, and prints per cell:
//   found/optimal  true time of the configuration it converged to / the best
//                  configuration's (true time = median of its repetitions)
//   extra chunks   chunks the optimum could have processed in the time the
//                  search spent beyond it (the paper's "cost", Figure 9)
//   effort         time until convergence / time of the full evaluation the
//                  paper compares with (Figure 11): every configuration runs
//                  the whole query, Q chunks (header key query_chunks,
//                  default 64 = 2^30 rows in 2^24-row chunks); effort3 is
//                  against a minimal exhaustive search measuring each
//                  configuration on 3 chunks only, and tested% the share of
//                  the grid's configurations measured.
// Targets: >= 95 % of cells within 2 % of the optimum, worst <= 1.10x,
// median effort <= 1 %.
//
// usage: tuner_replay_bench [spaces.csv] [--write-synthetic out.csv] [--strict]
//                           [--noise 0.004] [--roughness 0.01] [--steady-state]
//                           [--similarity S]   (plateau threshold s; default the paper's)
//                           [--patience N]     (stop after N configurations without a 1 % gain; 0 = never)
//                           [--full-grid] [--no-probes] [--paper]
//   --full-grid searches every recorded dimension instead of the tuner's
//   variant grid (default_search_space); --no-probes starts from the rule
//   configuration alone; --paper = Algorithm 1 as published (both, patience 0).
//   --steady-state drops repetition 0 of every configuration recorded with
//   more than one: sweep_spaces resets the table before each configuration,
//   so its first chunk inserts every group while the later ones (the same
//   chunk again) only update them; mid-query the tuner measures on a table
//   already filled by earlier chunks, as the later repetitions do.
//   without a file it generates synthetic spaces (synthetic_spaces.hpp) with
//   the given chunk-time noise and per-configuration roughness.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "bench/tuner/recorded_space.hpp"
#include "bench/tuner/synthetic_spaces.hpp"
#include "gpu/rules/cold_start_rules.hpp"
#include "gpu/tuner/damon_search.hpp"

namespace tb = tally::bench;
namespace tg = tally::gpu;

namespace {

// Chunks of one query when the recording does not say: 2^30 rows in chunks of
// 2^24 rows (the paper's evaluation used 4 GB in 32 MB blocks = 128).
constexpr int64_t kDefaultQueryChunks = 64;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

struct ReplayOptions {
  bool full_grid = false;  // search every recorded dimension (the first replay), not the tuner's variant grid
  bool probes = true;      // probe_configurations: far ends of the variant parameters first
};

// The grid the tuner searches for a cell: the tuner's own grid for the variant
// (default_search_space), restricted to the recorded values; a dimension the
// variant's grid leaves out is fixed at the recorded value nearest the rule
// start's (the optimum stays the whole recorded cell's, so leaving out a
// dimension that matters shows as a worse found/optimal). --full-grid: every
// recorded dimension.
tg::SearchSpace space_of(const tb::SpaceCell& cell, const tg::DeviceInfo& device, const tg::LaunchConfig& rule,
                         const ReplayOptions& options) {
  std::vector<tg::GridAxis> axes;
  tg::LaunchConfig base = cell.times.begin()->first;
  const tg::SearchSpace tuner_grid = tg::default_search_space(device, *tg::parse_variant(cell.variant));
  for (int d = 0; d < tg::kConfigDimensionCount; ++d) {
    const auto dim = static_cast<tg::ConfigDimension>(d);
    std::set<int32_t> values;
    for (const auto& [c, reps] : cell.times) values.insert(c.get(dim));
    const auto axis = std::find_if(tuner_grid.axes().begin(), tuner_grid.axes().end(),
                                   [dim](const tg::GridAxis& a) { return a.dimension == dim; });
    if (options.full_grid || axis != tuner_grid.axes().end()) {
      std::vector<int32_t> kept;
      for (int32_t v : values) {
        if (options.full_grid || std::count(axis->values.begin(), axis->values.end(), v)) kept.push_back(v);
      }
      if (!kept.empty()) {
        axes.push_back({dim, kept});
        continue;
      }
    }
    int32_t nearest = *values.begin();
    for (int32_t v : values) {
      if (std::abs(std::log(static_cast<double>(v)) - std::log(std::max(1, rule.get(dim)))) <
          std::abs(std::log(static_cast<double>(nearest)) - std::log(std::max(1, rule.get(dim)))))
        nearest = v;
    }
    base.set(dim, nearest);
  }
  return tg::SearchSpace(std::move(axes), base);
}

struct CellResult {
  double ratio = 0;
  double extra_chunks = 0;
  long chunks = 0;
  size_t tested = 0;
  double effort = 0;
  double effort3 = 0;
  bool converged = false;
  tg::LaunchConfig start, found, best;
};

// Where the search starts: Karnagel's grid rules (ADMS'15) from the device's
// properties, as the DaMoN'19 evaluation starts its search from a rule
// configuration. (The engine starts from gpu/rules/variant_rules.hpp's
// default_launch_config, which chunk_tuner_replay models.) A table within
// 4 x L2 is cache-resident and wants full occupancy; a larger one only as
// many concurrent threads as keep one cache line each in half of L2, fewer
// still beyond the TLB's reach (an eighth of memory); shared-memory tables
// get as many blocks as fit an SM's shared memory; the streaming variants
// (dense, sort) full occupancy with quarter-size blocks.
tg::LaunchConfig rule_start(const tb::SpaceCell& cell, const tg::DeviceInfo& device, const tb::RecordedSpaces& spaces) {
  constexpr int64_t kCacheLineBytes = 128;      // one probe touches one line on every NVIDIA GPU since Fermi
  constexpr int32_t kStreamingBlockDivisor = 4;  // more, smaller blocks balance a chunk's tail
  constexpr int32_t kL2BoundBlocksPerSm = 8;     // Karnagel's L2-bound grid shape
  constexpr int64_t kTlbBoundThreadDivisor = 8;  // his best grid beyond TLB reach had 8x fewer threads
  constexpr int64_t kTlbBoundMemoryDivisor = 8;  // tables beyond this share of memory exceed TLB reach
  constexpr int32_t kFillNormal = 50;
  const auto floor_pow2 = [](int64_t v) {
    return static_cast<int32_t>(std::bit_floor(static_cast<uint64_t>(std::max<int64_t>(v, 1))));
  };
  tg::AggregationShape shape;
  shape.estimated_groups = static_cast<double>(cell.groups);
  shape.key_bytes = static_cast<int>(spaces.metadata_int("key_bytes", 8));
  shape.state_bytes = static_cast<int>(spaces.metadata_int("state_bytes", 8));
  const auto table_bytes = [&](int32_t fill) {
    return static_cast<int64_t>(std::ceil(std::max(1.0, shape.estimated_groups) *
                                          static_cast<double>(tg::slot_bytes(shape)) * 100.0 / fill));
  };
  const int64_t l2 = static_cast<int64_t>(device.l2_bytes);
  const int32_t max_tpb = floor_pow2(std::max(device.warp_size, device.max_threads_per_block));
  tg::LaunchConfig c;
  c.fill_factor_percent = tg::rule_fill_factor_percent(device, shape);
  const auto variant = tg::parse_variant(cell.variant);
  if (variant == tg::Variant::shared_hash) {
    const int64_t table = std::max<int64_t>(1, table_bytes(kFillNormal));
    const int64_t per_sm = device.shared_memory_per_sm > 0 ? static_cast<int64_t>(device.shared_memory_per_sm)
                                                           : static_cast<int64_t>(device.shared_memory_per_block_optin);
    c.blocks_per_sm = std::clamp<int32_t>(floor_pow2(per_sm / table), 1, std::max(1, device.max_blocks_per_sm));
    c.threads_per_block = std::clamp<int32_t>(floor_pow2(device.max_threads_per_sm / c.blocks_per_sm), device.warp_size, max_tpb);
    return c;
  }
  if (variant == tg::Variant::dense || variant == tg::Variant::sort) {
    c.threads_per_block = std::max<int32_t>(device.warp_size, max_tpb / kStreamingBlockDivisor);
    c.blocks_per_sm = std::max(1, device.max_threads_per_sm / c.threads_per_block);
    return c;
  }
  const int64_t table = table_bytes(c.fill_factor_percent);
  if (l2 <= 0 || table <= 4 * l2) {
    c.threads_per_block = max_tpb;
    c.blocks_per_sm = std::max(1, device.max_threads_per_sm / max_tpb);
    return c;
  }
  int64_t threads = l2 / (2 * kCacheLineBytes);
  if (table > static_cast<int64_t>(device.total_memory) / kTlbBoundMemoryDivisor) threads /= kTlbBoundThreadDivisor;
  const int64_t want = std::max<int64_t>(device.warp_size, threads / std::max(1, device.sm_count));
  const int32_t lo = floor_pow2(want);
  const int32_t per_sm = static_cast<double>(want) / lo >= std::sqrt(2.0) ? lo * 2 : lo;  // nearest power of two
  c.threads_per_block = std::clamp<int32_t>(floor_pow2(per_sm / kL2BoundBlocksPerSm), device.warp_size, max_tpb);
  c.blocks_per_sm = std::clamp<int32_t>(floor_pow2(per_sm / c.threads_per_block), 1, std::max(1, device.max_blocks_per_sm));
  return c;
}

CellResult replay(const tb::SpaceCell& cell, const tg::DeviceInfo& device, const tb::RecordedSpaces& spaces,
                  const tg::SearchParams& params, const ReplayOptions& options) {
  const auto query_chunks = static_cast<double>(spaces.metadata_int("query_chunks", kDefaultQueryChunks));
  std::map<tg::LaunchConfig, double> truth;
  double t_opt = INFINITY, sweep_time = 0, min3_time = 0;
  CellResult r;
  for (const auto& [c, reps] : cell.times) {
    truth[c] = median(reps);
    sweep_time += query_chunks * truth[c];
    min3_time += 3 * truth[c];
    if (truth[c] < t_opt) {
      t_opt = truth[c];
      r.best = c;
    }
  }
  const tg::LaunchConfig rule = rule_start(cell, device, spaces);
  const tg::SearchSpace space = space_of(cell, device, rule, options);
  r.start = space.snap(rule);

  tg::DamonSearch search(space, options.probes ? tg::probe_configurations(space, r.start) : std::vector<tg::LaunchConfig>{r.start},
                         params);
  std::map<tg::LaunchConfig, size_t> runs;
  double spent = 0;
  constexpr long kMaxChunks = 100'000;  // a search that never converges is reported, not looped on
  while (!search.converged() && search.chunks() < kMaxChunks) {
    const tg::LaunchConfig c = search.next_configuration();
    const auto it = cell.times.find(c);
    // A configuration missing from the recording (e.g. it failed to launch)
    // behaves as unusably slow.
    const double t = it == cell.times.end() ? 1e3 * t_opt : it->second[runs[c]++ % it->second.size()];
    spent += t;
    search.report(c, t);
  }
  r.converged = search.converged();
  r.found = search.best();
  r.ratio = truth.count(r.found) ? truth[r.found] / t_opt : INFINITY;
  r.chunks = search.chunks();
  r.tested = search.configurations_tested();
  r.extra_chunks = spent / t_opt - static_cast<double>(r.chunks);
  r.effort = spent / sweep_time;
  r.effort3 = spent / min3_time;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input, write_synthetic;
  bool strict = false, steady_state = false;
  double similarity = -1;  // < 0: the paper's default
  int patience = -1;       // < 0: the tuner's default (SearchParams)
  double abandon = -1;     // < 0: the tuner's default (SearchParams)
  ReplayOptions options;
  tb::SyntheticOptions synthetic;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--noise") == 0 && i + 1 < argc) {
      synthetic.noise = std::stod(argv[++i]);
      continue;
    }
    if (std::strcmp(argv[i], "--roughness") == 0 && i + 1 < argc) {
      synthetic.roughness = std::stod(argv[++i]);
      continue;
    }
    if (std::strcmp(argv[i], "--similarity") == 0 && i + 1 < argc) {
      similarity = std::stod(argv[++i]);
      continue;
    }
    if (std::strcmp(argv[i], "--patience") == 0 && i + 1 < argc) {
      patience = std::stoi(argv[++i]);
      continue;
    }
    if (std::strcmp(argv[i], "--abandon") == 0 && i + 1 < argc) {
      abandon = std::stod(argv[++i]);
      continue;
    }
    if (std::strcmp(argv[i], "--full-grid") == 0) {
      options.full_grid = true;
      continue;
    }
    if (std::strcmp(argv[i], "--no-probes") == 0) {
      options.probes = false;
      continue;
    }
    if (std::strcmp(argv[i], "--paper") == 0) {  // Algorithm 1 as published, on every recorded dimension
      options.full_grid = true;
      options.probes = false;
      patience = 0;
      abandon = 0;
      continue;
    }
    if (std::strcmp(argv[i], "--write-synthetic") == 0 && i + 1 < argc) {
      write_synthetic = argv[++i];
    } else if (std::strcmp(argv[i], "--steady-state") == 0) {
      steady_state = true;
    } else if (std::strcmp(argv[i], "--strict") == 0) {
      strict = true;
    } else {
      input = argv[i];
    }
  }
  tb::RecordedSpaces spaces;
  try {
    if (input.empty()) {
      spaces = tb::synthetic_spaces(synthetic);
    } else {
      std::ifstream in(input);
      if (!in) {
        std::fprintf(stderr, "cannot open %s\n", input.c_str());
        return 2;
      }
      spaces = tb::read_spaces(in);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  if (steady_state) {
    for (auto& cell : spaces.cells) {
      for (auto& [c, reps] : cell.times) {
        if (reps.size() > 1) reps.erase(reps.begin());
      }
    }
  }
  if (!write_synthetic.empty()) {
    std::ofstream out(write_synthetic);
    tb::write_spaces(out, spaces);
  }
  const tg::DeviceInfo device = spaces.device();
  tg::SearchParams params;  // the paper's defaults: s = 0.06, p = 1.07, v_max = 0.019, b_max = 10
  if (similarity >= 0) params.similarity_s = similarity;
  if (strict) params.similarity_s = 0.0;
  if (patience >= 0) params.patience = patience;
  if (abandon >= 0) params.abandon_factor = abandon;

  const auto source = spaces.metadata.count("source") ? spaces.metadata.at("source") : input;
  if (input.empty()) {
    std::printf("synthetic: noise %.3f, roughness %.3f, outliers on %.0f %% of configurations\n", synthetic.noise,
                synthetic.roughness, 100 * synthetic.outlier_share);
  }
  if (steady_state) std::printf("steady state: repetition 0 (the table-filling chunk) dropped\n");
  std::printf("spaces: %s\ndevice: %s\nsearch: s=%.3f p=%.3f v_max=%.3f b_max=%d patience=%d (min improvement %.3f) "
              "abandon=%.2f probes=%s grid=%s\n\n",
              source.c_str(), device.name.c_str(), params.similarity_s, params.pruning_p, params.measurement.v_max,
              params.measurement.b_max, params.patience, params.min_improvement, params.abandon_factor,
              options.probes ? "on" : "off",
              options.full_grid ? "every recorded dimension" : "the tuner's variant grid");
  std::printf("%-14s %10s %6s %28s %28s %28s %8s %7s %7s %7s %9s %8s\n", "variant", "groups", "grid", "start",
              "found", "optimum", "found/opt", "chunks", "tested", "extra", "effort%", "effort3%");
  std::vector<double> tested_share;
  std::vector<double> ratios, efforts, efforts3, extras;
  int within = 0, not_converged = 0;
  for (const auto& cell : spaces.cells) {
    if (cell.times.empty()) continue;
    const CellResult r = replay(cell, device, spaces, params, options);
    ratios.push_back(r.ratio);
    efforts.push_back(r.effort);
    efforts3.push_back(r.effort3);
    extras.push_back(r.extra_chunks);
    tested_share.push_back(static_cast<double>(r.tested) / static_cast<double>(cell.times.size()));
    if (r.ratio <= 1.02) ++within;
    if (!r.converged) ++not_converged;
    std::printf("%-14s %10llu %6zu %28s %28s %28s %8.4f %7ld %7zu %7.1f %9.3f %8.2f\n", cell.variant.c_str(),
                static_cast<unsigned long long>(cell.groups), cell.times.size(), tg::to_string(r.start).c_str(),
                tg::to_string(r.found).c_str(), tg::to_string(r.best).c_str(), r.ratio, r.chunks, r.tested,
                r.extra_chunks, 100 * r.effort, 100 * r.effort3);
  }
  if (ratios.empty()) {
    std::printf("no cells\n");
    return 2;
  }
  const double share = static_cast<double>(within) / static_cast<double>(ratios.size());
  const double worst = *std::max_element(ratios.begin(), ratios.end());
  const double effort_median = median(efforts);
  std::printf("\ncells: %zu (not converged: %d)\n", ratios.size(), not_converged);
  std::printf("found/optimal: within 1%%: %.1f %%, within 2%%: %.1f %%, median %.4f, p95 %.4f, worst %.4f\n",
              100.0 * static_cast<double>(std::count_if(ratios.begin(), ratios.end(), [](double x) { return x <= 1.01; })) /
                  static_cast<double>(ratios.size()),
              100 * share, median(ratios), percentile(ratios, 0.95), worst);
  std::printf("extra chunks (cost): median %.1f, p95 %.1f, max %.1f\n", median(extras), percentile(extras, 0.95),
              *std::max_element(extras.begin(), extras.end()));
  std::printf("effort vs full evaluation (every configuration x %lld-chunk query): median %.3f %%, p95 %.3f %%\n",
              static_cast<long long>(spaces.metadata_int("query_chunks", kDefaultQueryChunks)), 100 * effort_median,
              100 * percentile(efforts, 0.95));
  std::printf("effort vs 3-chunk exhaustive search: median %.2f %%; configurations tested: median %.1f %% of the grid\n",
              100 * median(efforts3), 100 * median(tested_share));
  const bool ok = share >= 0.95 && worst <= 1.10 && effort_median <= 0.01;
  std::printf("targets (>= 95 %% within 2 %%, worst <= 1.10, median effort <= 1 %%): %s\n", ok ? "MET" : "NOT MET");
  return ok ? 0 : 1;
}
