// A chunk column's statistics: min/max, NULL count and the HyperLogLog sketch,
// which must be the sketch of the column's set of values however it is built
// (one hash per row, or one per distinct value of a narrow range).
#include "storage/column_stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <random>

#include "common/hll_hash.hpp"

namespace tally::storage {
namespace {

// The sketch written the plain way: every non-NULL value hashed once.
std::vector<uint8_t> reference_sketch(const std::vector<int64_t>& values, const std::vector<uint8_t>& validity) {
  std::vector<uint8_t> reg(2 + (size_t{1} << stats_hll_precision), 0);
  reg[0] = kHllFormatVersion;
  reg[1] = stats_hll_precision;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!validity.empty() && validity[i] == 0) continue;
    const uint64_t h = hll_hash(static_cast<uint64_t>(values[i]));
    const uint64_t rest = h << stats_hll_precision;
    const int max_rho = 64 - stats_hll_precision + 1;
    const int rho = rest == 0 ? max_rho : std::min(std::countl_zero(rest) + 1, max_rho);
    uint8_t& r = reg[2 + (h >> (64 - stats_hll_precision))];
    r = std::max<uint8_t>(r, static_cast<uint8_t>(rho));
  }
  return reg;
}

ColumnVector int8_column(const std::vector<int64_t>& values, std::vector<uint8_t> validity = {}) {
  ColumnVector col;
  col.type = SqlType{TypeId::int8};
  col.rows = values.size();
  col.data.resize(values.size() * 8);
  std::memcpy(col.data.data(), values.data(), col.data.size());
  col.validity = std::move(validity);
  return col;
}

void expect_stats(const std::vector<int64_t>& values, const std::vector<uint8_t>& validity = {}) {
  const catalog::ColumnStats st = compute_column_stats(int8_column(values, validity));
  uint64_t nulls = 0;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!validity.empty() && validity[i] == 0) {
      ++nulls;
      continue;
    }
    lo = std::min(lo, values[i]);
    hi = std::max(hi, values[i]);
  }
  EXPECT_EQ(st.null_count, nulls);
  ASSERT_EQ(st.has_min_max, nulls < values.size());
  if (st.has_min_max) {
    EXPECT_EQ(st.min_int, lo);
    EXPECT_EQ(st.max_int, hi);
  }
  EXPECT_EQ(st.hll, reference_sketch(values, validity));
}

TEST(ColumnStats, NarrowRangeSketchEqualsOneHashPerRow) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> v(1 << 20);
  for (auto& x : v) x = -50 + static_cast<int64_t>(rng() % 100);
  expect_stats(v);
}

TEST(ColumnStats, WideRangeSketchEqualsOneHashPerRow) {
  std::mt19937_64 rng(11);
  std::vector<int64_t> v(1 << 19);
  for (auto& x : v) x = static_cast<int64_t>(rng());
  expect_stats(v);
}

TEST(ColumnStats, ExtremesAndNullsKeepTheirCounts) {
  std::vector<int64_t> v = {INT64_MIN, INT64_MAX, 0, 5, 5, -1};
  expect_stats(v);
  expect_stats(v, {1, 0, 1, 1, 0, 1});
  std::vector<int64_t> narrow(300000);
  std::vector<uint8_t> valid(narrow.size());
  for (size_t i = 0; i < narrow.size(); ++i) {
    narrow[i] = static_cast<int64_t>(i % 1000) + INT64_MAX - 1000;
    valid[i] = i % 7 != 0;
  }
  expect_stats(narrow, valid);
}

TEST(ColumnStats, RangeWiderThanHalfOfInt64IsHashedRowByRow) {
  // (hi - lo + 1) * 4 wraps around for these: the byte map must not be chosen.
  std::vector<int64_t> v(4096);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 2 ? INT64_MAX / 2 + 3 : -(INT64_MAX / 2) - 2;
  expect_stats(v);
  v[0] = INT64_MIN;
  v[1] = INT64_MAX;
  expect_stats(v);
}

TEST(ColumnStats, AllNullColumnHasNoMinMax) {
  expect_stats({3, 4, 5}, {0, 0, 0});
}

}  // namespace
}  // namespace tally::storage
