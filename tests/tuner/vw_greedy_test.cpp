#include "gpu/tuner/vw_greedy.hpp"

#include <gtest/gtest.h>

#include <map>

namespace tally::gpu {
namespace {

TEST(VwGreedy, MeasuresUnknownVariantsFirstInRuleOrder) {
  VwGreedy policy(0.05, 1);
  std::vector<VariantStats> pool = {{"shared_memory", std::nullopt, 0}, {"global", std::nullopt, 0}};
  auto choice = policy.choose(pool);
  EXPECT_EQ(choice.variant, "shared_memory");
  EXPECT_EQ(choice.reason, ChoiceReason::rule);
  pool[0].best_seconds_per_row = 2e-9;
  choice = policy.choose(pool);
  EXPECT_EQ(choice.variant, "global");
  EXPECT_EQ(choice.reason, ChoiceReason::explore);
}

TEST(VwGreedy, MostlyExploitsTheBestAndExploresAtTheConfiguredRate) {
  VwGreedy policy(0.1, 42);
  const std::vector<VariantStats> pool = {
      {"shared_memory", 3e-9, 5}, {"global", 1e-9, 5}, {"sort", 4e-9, 5}};
  std::map<std::string, int> counts;
  int explored = 0;
  const int queries = 20'000;
  for (int i = 0; i < queries; ++i) {
    const auto c = policy.choose(pool);
    ++counts[c.variant];
    if (c.reason == ChoiceReason::explore) {
      ++explored;
      EXPECT_NE(c.variant, "global");
    } else {
      EXPECT_EQ(c.variant, "global");
      EXPECT_EQ(c.reason, ChoiceReason::cache);
    }
  }
  EXPECT_NEAR(static_cast<double>(explored) / queries, 0.1, 0.01);
  EXPECT_NEAR(counts["shared_memory"], counts["sort"], queries * 0.015);  // exploration is uniform
}

TEST(VwGreedy, ZeroExploreRateAlwaysExploits) {
  VwGreedy policy(0.0, 3);
  const std::vector<VariantStats> pool = {{"a", 2.0, 1}, {"b", 1.0, 1}};
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(policy.choose(pool).variant, "b");
}

TEST(VwGreedy, EmptyPoolIsAProgrammerError) {
  VwGreedy policy(0.1, 3);
  EXPECT_THROW(policy.choose({}), std::invalid_argument);
}

}  // namespace
}  // namespace tally::gpu
