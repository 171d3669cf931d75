// Ordered-set aggregates and count(DISTINCT) with the GPU engine: the
// device's segmented sort (gpu/ordered_values_sort.hpp) against std::sort,
// and whole queries on the GPU engine (its run of the other aggregates, the
// ordered ones beside it) against the CPU engine. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "gpu/ordered_values_sort.hpp"
#include "gpu/rules/device_info.hpp"
#include "tests/executor/packed_key_cases.hpp"

namespace tally {
namespace {

using executor::testing::PackedKeyTables;

TEST(GpuOrderedValues, SegmentedSortMatchesHostSort) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(11);
  // Empty segments, one-value segments, a large one, many small ones.
  std::vector<uint64_t> offsets{0};
  for (int g = 0; g < 20000; ++g) {
    const uint64_t len = g == 7 ? 3'000'000 : g % 5 == 0 ? 0 : g % 3 == 0 ? 1 : rng() % 200;
    offsets.push_back(offsets.back() + len);
  }
  std::vector<uint64_t> codes(offsets.back());
  for (auto& c : codes) c = rng() % 7 == 0 ? rng() % 16 : rng();  // duplicates too
  std::vector<uint64_t> want = codes;
  for (size_t g = 0; g + 1 < offsets.size(); ++g) {
    std::sort(want.begin() + static_cast<long>(offsets[g]), want.begin() + static_cast<long>(offsets[g + 1]));
  }
  ASSERT_TRUE(gpu::sort_segments_on_device(codes.data(), codes.size(), offsets.data(), offsets.size() - 1));
  EXPECT_EQ(codes, want);
}

TEST(GpuOrderedValues, QueriesAnswerAsTheCpuEngine) {
  if (gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  PackedKeyTables tables("tally-gpu-ordered-values");
  ASSERT_NE(tables.database().gpu_engine(), nullptr);
  tables.create();
  const char* queries[] = {
      "SELECT id4, percentile_cont(0.5) WITHIN GROUP (ORDER BY v), percentile_disc(0.25) WITHIN GROUP (ORDER BY v), "
      "mode() WITHIN GROUP (ORDER BY s), count(DISTINCT v), count(*), sum(v), min(big) FROM h GROUP BY id4",
      "SELECT id4, id5, percentile_cont(0.9) WITHIN GROUP (ORDER BY v DESC), count(DISTINCT big), count(v) FROM h "
      "GROUP BY id4, id5",
      "SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v), count(DISTINCT s), max(v) FROM h",
      // count(*) beside it keeps the DISTINCT on the ordered-values path (alone it is
      // planned as a grouping: executor/distinct_count_rewrite.hpp).
      "SELECT id4, count(DISTINCT v), count(*) FROM h WHERE false GROUP BY id4",
  };
  for (const char* sql : queries) {
    const auto cpu = tables.rows_on("cpu", sql);
    const auto gpu = tables.rows_on("gpu", sql);
    EXPECT_EQ(gpu, cpu) << sql;
    const std::string plan = tables.explain_on("gpu", sql);
    EXPECT_NE(plan.find("Engine: gpu"), std::string::npos) << sql << "\n" << plan;
    EXPECT_NE(plan.find("sorted per group"), std::string::npos) << sql << "\n" << plan;
  }
}

}  // namespace
}  // namespace tally
