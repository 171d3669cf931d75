// executor/estimate/estimate_cache.hpp: an estimate is found again for the
// same snapshot version and key columns only, and never for a version that
// is gone.
#include "executor/estimate/estimate_cache.hpp"

#include <gtest/gtest.h>

namespace tally::executor::estimate {
namespace {

TEST(EstimateCache, FoundForTheSameVersionAndColumnsOnly) {
  auto version = std::make_shared<int>(1);
  auto other = std::make_shared<int>(2);
  keep_estimate(version, {3}, {1000, "sketch"});
  keep_estimate(version, {1, 2}, {50, "sample"});
  const auto one = cached_estimate(version, {3});
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->groups, 1000u);
  EXPECT_EQ(one->source, "sketch");
  const auto pair = cached_estimate(version, {1, 2});
  ASSERT_TRUE(pair.has_value());
  EXPECT_EQ(pair->groups, 50u);
  EXPECT_FALSE(cached_estimate(version, {2, 1}).has_value());
  EXPECT_FALSE(cached_estimate(version, {4}).has_value());
  EXPECT_FALSE(cached_estimate(other, {3}).has_value());
  EXPECT_FALSE(cached_estimate(nullptr, {3}).has_value());
}

TEST(EstimateCache, AVersionThatIsGoneIsNeverFound) {
  auto version = std::make_shared<int>(7);
  keep_estimate(version, {0}, {12, "sketch"});
  const void* at = version.get();
  version.reset();
  // A new version may be allocated where the old one was: still no entry.
  for (int i = 0; i < 64; ++i) {
    auto fresh = std::make_shared<int>(i);
    if (fresh.get() == at) {
      EXPECT_FALSE(cached_estimate(fresh, {0}).has_value());
    }
    EXPECT_FALSE(cached_estimate(fresh, {0}).has_value());
  }
}

TEST(EstimateCache, HoldsABoundedNumberOfEstimates) {
  std::vector<std::shared_ptr<int>> versions;
  for (size_t i = 0; i < kMaxCachedEstimates + 10; ++i) {
    versions.push_back(std::make_shared<int>(static_cast<int>(i)));
    keep_estimate(versions.back(), {0}, {i, "sketch"});
  }
  EXPECT_FALSE(cached_estimate(versions.front(), {0}).has_value());  // the oldest left
  const auto last = cached_estimate(versions.back(), {0});
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->groups, kMaxCachedEstimates + 9);
}

}  // namespace
}  // namespace tally::executor::estimate
