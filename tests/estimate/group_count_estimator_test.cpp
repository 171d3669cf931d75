#include "executor/estimate/group_count_estimator.hpp"

#include <gtest/gtest.h>

#include <random>

#include "executor/estimate/sample_plan.hpp"

namespace tally::executor::estimate {
namespace {

double q_error(double estimate, double truth) { return std::max(estimate / truth, truth / estimate); }

// Runs the adaptive sampling loop the executor runs over a key column.
GroupCountEstimate sample_and_estimate(const std::vector<uint64_t>& keys, bool with_previous) {
  SamplePlan plan(keys.size());
  std::vector<uint64_t> hashes, previous;
  GroupCountEstimate estimate;
  do {
    for (uint64_t pos : plan.next_round()) {
      hashes.push_back(hll_hash(keys[pos]));
      previous.push_back(pos == 0 ? ~hashes.back() : hll_hash(keys[pos - 1]));
    }
    EstimateInput input{.sample_hashes = hashes, .total_rows = keys.size()};
    if (with_previous) input.previous_hashes = previous;
    estimate = estimate_group_count(input);
  } while (plan.should_grow(estimate));
  return estimate;
}

TEST(GroupCountEstimator, UniformKeysAcrossCardinalities) {
  std::mt19937_64 rng(42);
  for (uint64_t groups : {uint64_t{1}, uint64_t{50}, uint64_t{5000}, uint64_t{200'000}}) {
    std::vector<uint64_t> keys(2'000'000);
    for (auto& k : keys) k = rng() % groups;
    const auto e = sample_and_estimate(keys, true);
    EXPECT_LT(q_error(e.groups, static_cast<double>(groups)), 1.2) << groups;
    EXPECT_LE(e.lower, e.groups);
    EXPECT_GE(e.upper, e.groups);
    EXPECT_EQ(e.source, EstimateSource::sample);
  }
}

TEST(GroupCountEstimator, SortedKeysNeedRunStarts) {
  // 200k groups in runs of 10 rows: a row sample sees no repeats and cannot
  // tell this table from an all-distinct one; run starts can.
  std::vector<uint64_t> keys(2'000'000);
  for (uint64_t i = 0; i < keys.size(); ++i) keys[i] = i / 10;
  const auto rows_only = sample_and_estimate(keys, false);
  const auto with_runs = sample_and_estimate(keys, true);
  EXPECT_GT(q_error(rows_only.groups, 200'000.0), 3.0);
  EXPECT_LT(q_error(with_runs.groups, 200'000.0), 1.3);
}

TEST(GroupCountEstimator, WholeTableSampleIsExact) {
  std::vector<uint64_t> hashes;
  for (uint64_t i = 0; i < 5000; ++i) hashes.push_back(hll_hash(i % 321));
  const auto e = estimate_group_count({.sample_hashes = hashes, .total_rows = 5000});
  EXPECT_EQ(e.source, EstimateSource::exact);
  EXPECT_DOUBLE_EQ(e.groups, 321.0);
  EXPECT_DOUBLE_EQ(e.error_bound(), 1.0);
}

TEST(GroupCountEstimator, EmptyTable) {
  const auto e = estimate_group_count({.sample_hashes = {}, .total_rows = 0});
  EXPECT_EQ(e.source, EstimateSource::empty);
  EXPECT_EQ(e.groups, 0.0);
}

TEST(GroupCountEstimator, SingleColumnSketchGivesTheEstimateAndCountsNull) {
  std::vector<HllSketch> chunks(4);
  for (uint64_t v = 0; v < 400'000; ++v) chunks[v % 4].add_value_bits(v % 100'000);
  const auto merged = merge_sketches(chunks);
  ASSERT_TRUE(merged);
  const std::vector<HllSketch> columns = {*merged};
  const bool has_nulls[] = {true};
  const std::vector<uint64_t> tiny_sample = {hll_hash(1), hll_hash(2)};
  const auto e = estimate_group_count({.sample_hashes = tiny_sample, .total_rows = 400'000,
                                       .key_column_sketches = columns, .key_column_has_nulls = has_nulls});
  EXPECT_EQ(e.source, EstimateSource::sketch);
  EXPECT_LT(q_error(e.groups, 100'001.0), 1.05);
  EXPECT_LE(e.lower, e.groups);
  EXPECT_GE(e.upper, e.groups);
}

TEST(GroupCountEstimator, SketchesBoundAMultiColumnEstimate) {
  // Two perfectly correlated columns of 100k values each: the group count is
  // 100k, at least the larger column's count and at most the product.
  std::mt19937_64 rng(3);
  const uint64_t rows = 5'000'000;
  HllSketch a, b;
  for (uint64_t v = 0; v < 100'000; ++v) {
    a.add_value_bits(v);
    b.add_value_bits(v * 3);
  }
  // A deliberately tiny sample: alone it would say little.
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 2000; ++i) hashes.push_back(hll_hash(rng() % 100'000));
  const std::vector<HllSketch> columns = {a, b};
  const bool no_nulls[] = {false, false};
  const auto alone = estimate_group_count({.sample_hashes = hashes, .total_rows = rows});
  const auto bounded = estimate_group_count(
      {.sample_hashes = hashes, .total_rows = rows, .key_column_sketches = columns, .key_column_has_nulls = no_nulls});
  EXPECT_EQ(bounded.source, EstimateSource::sample_sketch);
  EXPECT_LT(q_error(bounded.groups, 100'000.0), 1.1);
  EXPECT_LE(q_error(bounded.groups, 100'000.0), q_error(alone.groups, 100'000.0));
  EXPECT_LT(bounded.error_bound(), alone.error_bound());
}

TEST(GroupCountEstimator, MergeSketchesRejectsMixedPrecision) {
  std::vector<HllSketch> chunks = {HllSketch(12), HllSketch(11)};
  EXPECT_FALSE(merge_sketches(chunks));
  EXPECT_FALSE(merge_sketches({}));
}

}  // namespace
}  // namespace tally::executor::estimate
