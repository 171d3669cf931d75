#include "gpu/tuner/query_tuner.hpp"

#include <gtest/gtest.h>

#include "tests/tuner/synthetic_space.hpp"

namespace tally::gpu {
namespace {

DeviceProperties h100_like() {
  DeviceProperties d;
  d.name = "H100-like";
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.shared_memory_per_block = 227 * 1024;
  d.shared_memory_per_sm = 228 * 1024;
  d.l2_cache_bytes = 50 << 20;
  d.global_memory_bytes = 80ll << 30;
  return d;
}

QueryTunerInput input_for(double groups) {
  QueryTunerInput in;
  in.device = h100_like();
  in.shape.estimated_groups = groups;
  in.tuning.explore_rate = 0.0;
  return in;
}

// Time per row: a bowl around 128 x 8 threads with rows per thread 2 and fill 50 best.
double chunk_time(const LaunchConfig& c) {
  const double t = testing::bowl(128, 8)(c);
  const double r = std::log2(c.rows_per_thread) - 1;
  const double f = (c.fill_factor_percent - 50) / 25.0;
  return t * (1 + 0.02 * r * r) * (1 + 0.01 * f * f);
}

TEST(QueryTuner, ColdStartUsesTheRules) {
  const auto in = input_for(1'000'000);
  QueryTuner tuner(in);
  EXPECT_EQ(tuner.variant(), rule_variant_order(in.device, in.shape).front());
  EXPECT_EQ(tuner.reason(), ChoiceReason::rule);
  const SearchSpace space = default_search_space(in.device, tuner.variant());
  EXPECT_EQ(tuner.next_configuration(), space.snap(rule_launch_config(in.device, in.shape, tuner.variant())));
  EXPECT_FALSE(tuner.converged());
}

TEST(QueryTuner, WarmCacheRunsTheBestFromTheFirstChunk) {
  auto in = input_for(1'000'000);
  in.usable_variants = {"global"};  // one variant: no initial exploration of others
  QueryTuner cold(in);
  long chunks = 0;
  while (!cold.converged() && chunks++ < 20'000) {
    const auto c = cold.next_configuration();
    cold.report(c, chunk_time(c));
  }
  ASSERT_TRUE(cold.converged());
  const LaunchConfig best = cold.state().best.value();
  EXPECT_EQ(best.threads_per_block, 128);
  EXPECT_EQ(best.blocks_per_sm, 8);
  EXPECT_EQ(best.rows_per_thread, 2);

  in.cached.push_back({cold.variant(), cold.state().measured.at(best), 1, cold.state()});
  QueryTuner warm(in);
  EXPECT_EQ(warm.variant(), cold.variant());
  EXPECT_EQ(warm.reason(), ChoiceReason::cache);
  EXPECT_TRUE(warm.converged());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(warm.next_configuration(), best);
    warm.report(best, chunk_time(best) * 1.5);  // the data got slower
  }
  EXPECT_GT(warm.state().measured.at(best), chunk_time(best) * 1.1);  // the cached time follows
  EXPECT_NE(warm.explain().find("(cache)"), std::string::npos);
}

TEST(QueryTuner, UnmeasuredVariantsAreExploredBeforeExploiting) {
  auto in = input_for(1'000'000);
  in.usable_variants = {"global", "sort"};
  QueryTuner first(in);
  EXPECT_EQ(first.variant(), "global");
  in.cached.push_back({"global", 1e-9, 1, first.state()});
  QueryTuner second(in);
  EXPECT_EQ(second.variant(), "sort");
  EXPECT_EQ(second.reason(), ChoiceReason::explore);
}

TEST(QueryTuner, RefinementOffKeepsOneConfiguration) {
  auto in = input_for(1000);
  in.tuning.enabled = false;
  QueryTuner tuner(in);
  const auto c0 = tuner.next_configuration();
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(tuner.next_configuration(), c0);
    tuner.report(c0, chunk_time(c0));
  }
}

TEST(QueryTuner, ForcedVariant) {
  auto in = input_for(1000);
  in.forced_variant = "sort";
  QueryTuner tuner(in);
  EXPECT_EQ(tuner.variant(), "sort");
  // Sort has no hash table: its grid has no fill-factor axis.
  EXPECT_EQ(default_search_space(in.device, "sort").size(), 6u * 6u * 4u);
  // The global table's fill factor did not matter on the H100: not searched.
  EXPECT_EQ(default_search_space(in.device, "global").size(), 6u * 6u * 4u);
  // Shared-memory hash tables: fill factor searched.
  EXPECT_EQ(default_search_space(in.device, "shared_memory").size(), 6u * 6u * 4u * 3u);
  EXPECT_EQ(default_search_space(in.device, "partitioned").size(), 6u * 6u * 4u * 3u);
}

TEST(QueryTuner, ProbesStartFromBothEndsOfTheVariantParameters) {
  const SearchSpace space = default_search_space(input_for(1000).device, "shared_memory");
  LaunchConfig start;
  start.threads_per_block = 256;
  start.blocks_per_sm = 8;
  start.rows_per_thread = 1;
  start.fill_factor_percent = 83;
  const auto probes = probe_configurations(space, start);
  ASSERT_EQ(probes.size(), 3u);
  EXPECT_EQ(probes[0], start);
  EXPECT_EQ(probes[1].rows_per_thread, 8);      // far end of 1..8
  EXPECT_EQ(probes[1].fill_factor_percent, 83);
  EXPECT_EQ(probes[2].fill_factor_percent, 25);  // far end of 25..83
  EXPECT_EQ(probes[2].rows_per_thread, 1);
  for (const auto& p : probes) {
    EXPECT_EQ(p.threads_per_block, 256);
    EXPECT_EQ(p.blocks_per_sm, 8);
  }
}

}  // namespace
}  // namespace tally::gpu
