#include "gpu/tuner/damon_search.hpp"

#include <gtest/gtest.h>

#include "gpu/tuner/search_state_json.hpp"
#include "tests/tuner/synthetic_space.hpp"

namespace tally::gpu {
namespace {

using testing::drive;
using testing::exhaustive;
using testing::lg;
using testing::paper_grid;

LaunchConfig at(int tpb, int bps) {
  LaunchConfig c;
  c.threads_per_block = tpb;
  c.blocks_per_sm = bps;
  return c;
}

// The exhaustive search measures every configuration with the minimum
// three-chunk measurement.
long exhaustive_chunks(const SearchSpace& space) { return static_cast<long>(space.size()) * 3; }

TEST(DamonSearch, ConvexSpaceWithoutNoiseFindsTheOptimumCheaply) {
  const SearchSpace space = paper_grid();
  const auto f = testing::bowl(64, 16);
  DamonSearch search(space, {at(512, 1)});
  const auto r = drive(search, f);
  EXPECT_TRUE(search.converged());
  EXPECT_EQ(r.found, at(64, 16));
  // Gradient descent visits a path, not the grid.
  EXPECT_LT(r.chunks, exhaustive_chunks(space) / 4);
  EXPECT_LT(r.tested, space.size() / 3);
}

TEST(DamonSearch, ConvexSpaceWithNoiseConvergesNearTheOptimum) {
  const SearchSpace space = paper_grid();
  const auto f = testing::bowl(128, 8);
  const double best = exhaustive(space, f).best_time;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    DamonSearch search(space, {at(512, 1)});
    const auto r = drive(search, f, /*noise=*/0.005, 1.0, seed);
    ASSERT_TRUE(search.converged());
    EXPECT_LE(r.found_time / best, 1.02) << "seed " << seed << " found " << to_string(r.found);
    EXPECT_LT(r.chunks, exhaustive_chunks(space) / 2) << "seed " << seed;
  }
}

TEST(DamonSearch, PlateauBranchingFindsTheMinimumBehindAPlateau) {
  // A flat ridge along the diagonal tpb x bps = 2^9 leads from the start to a
  // narrow minimum at its far end; without plateau branching (s = 0) the
  // descent sees no strictly better neighbour and stops on the ridge.
  const SearchSpace space = paper_grid();
  const auto f = [](const LaunchConfig& c) {
    const double total = lg(c.threads_per_block) + lg(c.blocks_per_sm);
    double t = 1.0 + 0.2 * std::abs(total - 9.0);
    if (c.threads_per_block == 32 && c.blocks_per_sm == 16) t = 0.85;
    return 1e-9 * t;
  };
  const double best = exhaustive(space, f).best_time;
  SearchParams strict;
  strict.similarity_s = 0.0;
  DamonSearch greedy(space, {at(512, 1)}, strict);
  const auto rg = drive(greedy, f);
  DamonSearch plateau(space, {at(512, 1)});
  const auto rp = drive(plateau, f);
  EXPECT_EQ(rp.found, at(32, 16));
  EXPECT_DOUBLE_EQ(rp.found_time, best);
  EXPECT_GT(rg.found_time / best, 1.1) << "the strict descent was expected to stop on the ridge";
  EXPECT_LT(rp.chunks, exhaustive_chunks(space));
}

TEST(DamonSearch, SeveralLocalMinimaEndWithinPruningFactor) {
  // A bowl with two extra dips; the descent may end in a local minimum but,
  // with plateau handling, never one worse than p x the optimum.
  const SearchSpace space = paper_grid();
  const auto base = testing::bowl(256, 4, 0.05);
  const auto f = [&](const LaunchConfig& c) {
    double t = base(c);
    if (c.threads_per_block == 16 && c.blocks_per_sm == 64) t *= 0.93;
    if (c.threads_per_block == 1024 && c.blocks_per_sm == 1) t *= 0.9;
    return t;
  };
  const double best = exhaustive(space, f).best_time;
  for (const LaunchConfig start : {at(512, 1), at(1, 1), at(1024, 1024), at(32, 32)}) {
    DamonSearch search(space, {start});
    const auto r = drive(search, f, 0.003, 1.0, 7);
    EXPECT_LE(r.found_time / best, 1.07) << "start " << to_string(start) << " found " << to_string(r.found);
  }
}

TEST(DamonSearch, OutliersAtTheStartOfEachMeasurementAreDiscarded) {
  // Every configuration's first chunk is 40 % slow (cold caches, JIT): the
  // measurement discards it, so the search ranks configurations correctly.
  const SearchSpace space = paper_grid();
  const auto f = testing::bowl(64, 32);
  DamonSearch search(space, {at(512, 1)});
  const auto r = drive(search, f, 0.002, /*first_chunk_outlier=*/1.4, 3);
  EXPECT_EQ(r.found, at(64, 32));
  // Discarding costs at least one extra chunk per configuration, no more than b_max.
  EXPECT_GE(r.chunks, static_cast<long>(r.tested) * 4);
  EXPECT_LE(r.chunks, static_cast<long>(r.tested) * 10);
  for (const auto& step : search.state().path) {
    EXPECT_NEAR(step.seconds_per_row, f(step.config), f(step.config) * 0.02) << to_string(step.config);
  }
}

TEST(DamonSearch, ConvergedSearchRunsTheBestConfiguration) {
  const SearchSpace space = paper_grid();
  const auto f = testing::bowl(32, 2);
  DamonSearch search(space, {at(512, 1)});
  drive(search, f);
  ASSERT_TRUE(search.converged());
  for (int i = 0; i < 5; ++i) EXPECT_EQ(search.next_configuration(), at(32, 2));
  ASSERT_TRUE(search.best_seconds_per_row());
  EXPECT_NEAR(*search.best_seconds_per_row(), f(at(32, 2)), 1e-18);
}

TEST(DamonSearch, PersistedStateContinuesTheSameSearch) {
  const SearchSpace space = paper_grid();
  const auto f = testing::bowl(16, 64);
  DamonSearch whole(space, {at(512, 1)});
  const auto r_whole = drive(whole, f);

  DamonSearch first(space, {at(512, 1)});
  for (int i = 0; i < 10; ++i) {
    const auto c = first.next_configuration();
    first.report(c, f(c));
  }
  ASSERT_FALSE(first.converged());
  DamonSearch resumed(space, first.state());
  const auto r_resumed = drive(resumed, f);
  EXPECT_EQ(r_resumed.found, r_whole.found);
  EXPECT_EQ(resumed.state().path.size(), whole.state().path.size());
  EXPECT_EQ(resumed.state().measured, whole.state().measured);
  // The interrupted measurement continues with the chunk it had: no chunk is spent twice.
  EXPECT_EQ(r_resumed.chunks, r_whole.chunks);
}

// A warm query spends only a few chunks on the search (warm_search_share,
// two measurement units per search chunk), fewer than one measurement
// window: interrupted after every second chunk and persisted as JSON, the
// search still advances and ends where an uninterrupted one does, at the
// same cost. (Before session 6 the open measurement restarted on every
// resume and such a search never measured a second configuration.)
TEST(DamonSearch, SearchInterruptedEveryTwoChunksStillConverges) {
  const SearchSpace space = paper_grid();
  const auto f = testing::bowl(16, 64);
  DamonSearch whole(space, {at(512, 1)});
  const auto r_whole = drive(whole, f);

  SearchState state = DamonSearch(space, {at(512, 1)}).state();
  long chunks = 0;
  for (int query = 0; query < 10000; ++query) {
    const auto parsed = search_state_from_json(to_json(state));
    ASSERT_TRUE(parsed.has_value());
    DamonSearch s(space, *parsed);
    if (s.converged()) break;
    for (int i = 0; i < 2 && !s.converged(); ++i) {
      const auto c = s.next_configuration();
      s.report(c, f(c));
      ++chunks;
    }
    state = s.state();
  }
  DamonSearch done(space, state);
  ASSERT_TRUE(done.converged());
  EXPECT_EQ(done.best(), r_whole.found);
  EXPECT_EQ(done.state().measured, whole.state().measured);
  EXPECT_EQ(chunks, r_whole.chunks);
}

TEST(DamonSearch, MultipleInitialConfigurationsAreAllMeasuredFirst) {
  const SearchSpace space = paper_grid();
  const auto f = testing::bowl(1024, 2);
  DamonSearch search(space, {at(512, 1), at(1024, 4), at(512, 1)});
  drive(search, f);
  const auto& path = search.state().path;
  ASSERT_GE(path.size(), 2u);
  EXPECT_EQ(path[0].event, StepEvent::initial);
  EXPECT_EQ(path[1].event, StepEvent::initial);
  EXPECT_NE(path[2].event, StepEvent::initial);
  EXPECT_EQ(search.best(), at(1024, 2));
}

TEST(DamonSearch, ParamsComeFromTheTuningConfig) {
  config::TuningConfig tuning;
  tuning.similarity_s = 0.1;
  tuning.pruning_p = 1.2;
  tuning.v_max = 0.05;
  tuning.b_max = 4;
  const auto p = SearchParams::from_config(tuning);
  EXPECT_EQ(p.similarity_s, 0.1);
  EXPECT_EQ(p.pruning_p, 1.2);
  EXPECT_EQ(p.measurement.v_max, 0.05);
  EXPECT_EQ(p.measurement.b_max, 4);
  const SearchParams defaults = SearchParams::from_config(config::TuningConfig{});
  EXPECT_EQ(defaults.similarity_s, 0.06);
  EXPECT_EQ(defaults.pruning_p, 1.07);
  EXPECT_EQ(defaults.measurement.v_max, 0.019);
  EXPECT_EQ(defaults.measurement.b_max, 10);
}

}  // namespace
}  // namespace tally::gpu

namespace tally::gpu {
namespace {

TEST(DamonSearchPlateaus, VariantParameterStepsAreComparedStrictly) {
  // rows_per_thread has no effect at all: every step along it is "similar".
  // Branching there would walk the whole flat axis from every reference.
  const SearchSpace space({{ConfigDimension::threads_per_block, SearchSpace::powers_of_two(32, 1024)},
                           {ConfigDimension::blocks_per_sm, SearchSpace::powers_of_two(1, 32)},
                           {ConfigDimension::rows_per_thread, {1, 2, 4, 8}}});
  const auto f = testing::bowl(128, 4);
  LaunchConfig start;
  start.threads_per_block = 1024;
  start.blocks_per_sm = 1;
  DamonSearch thread_plateaus(space, {start});
  const auto r_default = drive(thread_plateaus, f);
  SearchParams everywhere;
  everywhere.plateau_dimensions = {ConfigDimension::threads_per_block, ConfigDimension::blocks_per_sm,
                                   ConfigDimension::rows_per_thread};
  DamonSearch all_plateaus(space, {start}, everywhere);
  const auto r_all = drive(all_plateaus, f);
  EXPECT_DOUBLE_EQ(r_default.found_time, exhaustive(space, f).best_time);
  EXPECT_DOUBLE_EQ(r_all.found_time, r_default.found_time);
  EXPECT_LT(r_default.tested * 2, r_all.tested);
}

}  // namespace
}  // namespace tally::gpu

namespace tally::gpu {
namespace {

// Patience: a flat space (every configuration within 0.5 %) is abandoned after
// `patience` configurations without a 1 % gain, instead of being walked by
// plateau branches; a bowl is still descended to its optimum.
TEST(DamonSearchPatience, FlatSpaceStopsEarlyBowlStillConverges) {
  const SearchSpace space = testing::paper_grid();
  const auto flat = [](const LaunchConfig& c) {
    return 1e-9 * (1.0 + 0.005 * std::sin(c.threads_per_block * 0.37 + c.blocks_per_sm * 1.3));
  };
  SearchParams paper;
  paper.patience = 0;
  SearchParams patient;
  patient.patience = 8;
  DamonSearch walk(space, {LaunchConfig{}}, paper), stop(space, {LaunchConfig{}}, patient);
  const auto r_walk = testing::drive(walk, flat);
  const auto r_stop = testing::drive(stop, flat);
  EXPECT_TRUE(stop.converged());
  EXPECT_LE(stop.configurations_tested(), 9u + 1u);
  EXPECT_GT(walk.configurations_tested(), 3 * stop.configurations_tested());
  EXPECT_LE(r_stop.found_time, 1.01e-9 * 1.005);

  DamonSearch bowl(space, {LaunchConfig{}}, patient);
  const auto r_bowl = testing::drive(bowl, testing::bowl(64, 16));
  EXPECT_EQ(r_bowl.found.threads_per_block, 64);
  EXPECT_EQ(r_bowl.found.blocks_per_sm, 16);
}

}  // namespace
}  // namespace tally::gpu
