#include "executor/estimate/sample_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace tally::executor::estimate {
namespace {

TEST(SamplePlan, LargeTableRoundsAreSortedDistinctAndSpread) {
  const uint64_t rows = 50'000'000;
  SamplePlan plan(rows);
  EXPECT_FALSE(plan.whole_table());
  EXPECT_EQ(plan.capacity(), uint64_t{1} << 18);  // bit_floor(1 % of 5e7)
  std::set<uint64_t> seen;
  const auto first = plan.next_round();
  ASSERT_EQ(first.size(), SamplePolicy{}.first_round_rows);
  EXPECT_TRUE(std::is_sorted(first.begin(), first.end()));
  // The first round alone already covers every 1/16 of the table evenly.
  std::vector<int> per_part(16, 0);
  for (uint64_t pos : first) {
    ASSERT_LT(pos, rows);
    ++per_part[pos * 16 / rows];
    seen.insert(pos);
  }
  for (int count : per_part) EXPECT_EQ(count, static_cast<int>(first.size() / 16));
  uint64_t total = first.size();
  while (!plan.exhausted()) {
    const auto round = plan.next_round();
    EXPECT_EQ(round.size(), total);  // each round doubles the sample
    for (uint64_t pos : round) EXPECT_TRUE(seen.insert(pos).second) << "row sampled twice";
    total += round.size();
  }
  EXPECT_EQ(total, plan.capacity());
  EXPECT_TRUE(plan.next_round().empty());
}

TEST(SamplePlan, SmallTableVisitsEveryRowOnce) {
  const uint64_t rows = 70'000;
  SamplePlan plan(rows);
  EXPECT_TRUE(plan.whole_table());
  std::vector<int> hits(rows, 0);
  while (!plan.exhausted()) {
    for (uint64_t pos : plan.next_round()) ++hits[pos];
  }
  EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
}

TEST(SamplePlan, SmallTableFirstRoundHasNoStride) {
  // Periodic keys (row mod 100) must all appear in the first round.
  SamplePlan plan(100'000);
  std::set<uint64_t> residues;
  for (uint64_t pos : plan.next_round()) residues.insert(pos % 100);
  EXPECT_EQ(residues.size(), 100u);
}

TEST(SamplePlan, EmptyTable) {
  SamplePlan plan(0);
  while (!plan.exhausted()) EXPECT_TRUE(plan.next_round().empty());
}

TEST(SamplePlan, ShouldGrowOnlyWhileUncertain) {
  SamplePlan plan(10'000'000);
  plan.next_round();
  GroupCountEstimate certain;
  certain.lower = certain.upper = 100;
  GroupCountEstimate vague;
  vague.lower = 100;
  vague.upper = 100'000;
  EXPECT_FALSE(should_grow(plan, certain));
  EXPECT_TRUE(should_grow(plan, vague));
  while (!plan.exhausted()) plan.next_round();
  EXPECT_FALSE(should_grow(plan, vague));
}

}  // namespace
}  // namespace tally::executor::estimate
