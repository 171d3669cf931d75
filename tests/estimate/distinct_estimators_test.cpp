#include "executor/estimate/distinct_estimators.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "executor/estimate/hll_sketch.hpp"

namespace tally::executor::estimate {
namespace {

constexpr Estimator kAll[] = {Estimator::gee, Estimator::chao_lee, Estimator::shlosser, Estimator::jackknife,
                              Estimator::hybrid};

TEST(FrequencyProfile, CountsFrequenciesOfFrequencies) {
  const std::vector<uint64_t> hashes = {5, 5, 5, 9, 9, 0, 0, 17, 23};
  const FrequencyProfile p = profile_from_hashes(hashes);
  EXPECT_EQ(p.sample_rows, 9u);
  EXPECT_EQ(p.distinct, 5u);  // 5, 9, 0, 17, 23 (hash 0 counted too)
  ASSERT_EQ(p.f.size(), 4u);
  EXPECT_EQ(p.f[1], 2u);
  EXPECT_EQ(p.f[2], 2u);
  EXPECT_EQ(p.f[3], 1u);
}

TEST(DistinctEstimators, WholePopulationSampleIsExact) {
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 1000; ++i) hashes.push_back(hll_hash(i % 37));
  const FrequencyProfile p = profile_from_hashes(hashes);
  for (Estimator e : kAll) EXPECT_DOUBLE_EQ(estimate_with(e, p, 1000), 37.0) << estimator_name(e);
}

TEST(DistinctEstimators, AllRepeatedSampleMeansAllGroupsSeen) {
  // 100 groups each seen 50 times in a 1 % sample: nothing is left unseen.
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 5000; ++i) hashes.push_back(hll_hash(i % 100));
  const FrequencyProfile p = profile_from_hashes(hashes);
  for (Estimator e : kAll) EXPECT_NEAR(estimate_with(e, p, 500'000), 100.0, 0.5) << estimator_name(e);
}

TEST(DistinctEstimators, GeeIsTheGeometricMeanOfItsBounds) {
  FrequencyProfile p;
  p.sample_rows = 100;
  p.distinct = 70;
  p.f = {0, 60, 5, 0, 0, 0, 5};  // 60 + 10 + 30 = 100 rows
  // sqrt(N/n) f1 + (d - f1) = 10 * 60 + 10
  EXPECT_DOUBLE_EQ(estimate_gee(p, 10'000), 610.0);
}

TEST(DistinctEstimators, AllDistinctSampleScalesToPopulation) {
  // Every sampled key distinct: jackknife and Shlosser say D = N.
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 1000; ++i) hashes.push_back(hll_hash(i));
  const FrequencyProfile p = profile_from_hashes(hashes);
  EXPECT_NEAR(estimate_jackknife(p, 100'000), 100'000.0, 1.0);
  EXPECT_NEAR(estimate_shlosser(p, 100'000), 100'000.0, 1.0);
  EXPECT_NEAR(estimate_gee(p, 100'000), 10'000.0, 1.0);
  for (Estimator e : kAll) {
    const double v = estimate_with(e, p, 100'000);
    EXPECT_GE(v, 1000.0);
    EXPECT_LE(v, 100'000.0);
  }
}

TEST(DistinctEstimators, HybridPicksJackknifeForUniformAndShlosserForSkew) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> uniform;
  for (int i = 0; i < 20'000; ++i) uniform.push_back(hll_hash(rng() % 5000));
  const FrequencyProfile pu = profile_from_hashes(uniform);
  EXPECT_TRUE(looks_uniform(pu));
  EXPECT_DOUBLE_EQ(estimate_hybrid(pu, 2'000'000), estimate_jackknife(pu, 2'000'000));
  EXPECT_NEAR(estimate_hybrid(pu, 2'000'000) / 5000.0, 1.0, 0.05);

  std::vector<uint64_t> skewed;  // half the rows on one key, the rest spread
  for (int i = 0; i < 20'000; ++i) skewed.push_back(hll_hash(i % 2 == 0 ? 0 : 1 + rng() % 5000));
  const FrequencyProfile ps = profile_from_hashes(skewed);
  EXPECT_FALSE(looks_uniform(ps));
  EXPECT_DOUBLE_EQ(estimate_hybrid(ps, 2'000'000), estimate_shlosser(ps, 2'000'000));
}

TEST(DistinctEstimators, EmptySampleEstimatesZero) {
  const FrequencyProfile p = profile_from_hashes({});
  for (Estimator e : kAll) EXPECT_EQ(estimate_with(e, p, 1000), 0.0);
}

}  // namespace
}  // namespace tally::executor::estimate
