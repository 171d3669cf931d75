// Percentiles' picks by selection (gpu/engine/ordered_select.cuh) against
// the sort's picks on the host (common/ordered_rows.hpp's pick_from_segments
// over every row sorted by key and code): float values uniform to 4 digits,
// normal and small with duplicates, with infinities, NaN, -0 and 0;
// heavy-tailed floats (the code buckets); integers over a wide signed
// range; cont and disc picks at both ends and between, ASC and DESC; a
// global aggregate's one key, a few keys and 2^14 of them with keys that
// have no rows. Values all equal (every row in one bucket)
// and a key beyond the keys' bits are left to the sort. Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "common/ordered_code.hpp"
#include "common/ordered_rows.hpp"
#include "gpu/engine/ordered_select.cuh"
#include "gpu/rules/device_info.hpp"
#include "tests/gpu/device_copy.hpp"
#include "tests/gpu/sorted_picks.hpp"

namespace tally::gpu {
namespace {

using testing::to_device;

const std::vector<OrderedPick> kPicks = {
    {OrderedPick::Kind::cont, 0.5, false}, {OrderedPick::Kind::cont, 0.0, false}, {OrderedPick::Kind::cont, 1.0, true},
    {OrderedPick::Kind::disc, 0.9, false}, {OrderedPick::Kind::disc, 0.25, true}, {OrderedPick::Kind::cont, 0.37, false},
};

PickArgs args_of(const std::vector<OrderedPick>& picks) {
  PickArgs a;
  a.count = static_cast<int>(picks.size());
  a.per = ordered_picks_per_group(picks);
  std::copy(picks.begin(), picks.end(), a.picks);
  return a;
}

using testing::sorted_picks;

std::optional<KeyedPicks> selected(const std::vector<uint64_t>& keys, const std::vector<uint64_t>& codes, int key_bits, bool floats,
                                   const std::vector<OrderedPick>& picks) {
  uint64_t* k = to_device(keys);
  uint64_t* c = to_device(codes);
  auto out = select_picks(k, c, keys.size(), key_bits, floats, args_of(picks), nullptr);
  EXPECT_EQ(cudaFree(k), cudaSuccess);
  EXPECT_EQ(cudaFree(c), cudaSuccess);
  return out;
}

void expect_as_sorted(const std::vector<uint64_t>& keys, const std::vector<uint64_t>& codes, int key_bits, bool floats,
                      const char* what) {
  const KeyedPicks want = sorted_picks(keys, codes, kPicks);
  const std::optional<KeyedPicks> got = selected(keys, codes, key_bits, floats, kPicks);
  ASSERT_TRUE(got.has_value()) << what << ": left to the sort";
  EXPECT_EQ(got->per_key, want.per_key) << what;
  EXPECT_EQ(got->keys, want.keys) << what;
  EXPECT_EQ(got->counts, want.counts) << what;
  EXPECT_EQ(std::vector<uint64_t>(got->codes.begin(), got->codes.end()), std::vector<uint64_t>(want.codes.begin(), want.codes.end()))
      << what;
  EXPECT_EQ(got->positions, want.positions) << what;
  EXPECT_EQ(got->null_key_rows, 0u) << what;
}

TEST(OrderedSelect, FloatsAsTheSortPicksThem) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 random(7);
  std::normal_distribution<double> normal(50, 20);
  for (const int key_bits : {0, 3, 14}) {
    const int64_t rows = key_bits == 14 ? 2000000 : 300000;
    std::vector<uint64_t> keys(rows), codes(rows);
    for (int64_t r = 0; r < rows; ++r) {
      // Keys 0 .. 2^bits - 1, some never drawn at 14 bits (2^14 - 1000 used).
      keys[r] = key_bits == 0 ? 0 : random() % ((uint64_t{1} << key_bits) - (key_bits == 14 ? 1000 : 0));
      double v;
      switch (r % 3) {
        case 0: v = std::round(static_cast<double>(random() % 1000000)) / 1e4; break;  // [0, 100) to 4 digits, duplicates
        case 1: v = normal(random); break;
        default: v = static_cast<double>(static_cast<int64_t>(random() % 201) - 100) / 8; break;
      }
      if (r % 9973 == 0) v = std::numeric_limits<double>::infinity();
      if (r % 9967 == 0) v = -std::numeric_limits<double>::infinity();
      if (r % 10007 == 0) v = std::nan("");
      if (r % 5003 == 0) v = -0.0;
      if (r % 5009 == 0) v = 0.0;
      codes[r] = order_code_of_float(v);
    }
    expect_as_sorted(keys, codes, key_bits, true, key_bits == 0 ? "floats, one key" : key_bits == 3 ? "floats, 8 keys" : "floats, 2^14 keys");
  }
}

// Values whose magnitudes differ by orders leave the value buckets too
// coarse; the code buckets (or the sort) take them, with the sort's answer.
TEST(OrderedSelect, HeavyTailedFloatsAsTheSortPicksThem) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 random(13);
  std::lognormal_distribution<double> tail(0, 3);
  const int64_t rows = 400000;
  std::vector<uint64_t> keys(rows), codes(rows);
  for (int64_t r = 0; r < rows; ++r) {
    keys[r] = random() % 64;
    codes[r] = order_code_of_float(tail(random));
  }
  const KeyedPicks want = sorted_picks(keys, codes, kPicks);
  const std::optional<KeyedPicks> got = selected(keys, codes, 6, true, kPicks);
  ASSERT_TRUE(got.has_value()) << "left to the sort";
  EXPECT_EQ(got->keys, want.keys);
  EXPECT_EQ(got->counts, want.counts);
  EXPECT_EQ(std::vector<uint64_t>(got->codes.begin(), got->codes.end()), std::vector<uint64_t>(want.codes.begin(), want.codes.end()));
  EXPECT_EQ(got->positions, want.positions);
}

TEST(OrderedSelect, IntegersAsTheSortPicksThem) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 random(11);
  for (const int key_bits : {0, 10}) {
    const int64_t rows = 500000;
    std::vector<uint64_t> keys(rows), codes(rows);
    for (int64_t r = 0; r < rows; ++r) {
      keys[r] = key_bits == 0 ? 0 : random() % (uint64_t{1} << key_bits);
      // Signed values over most of int64's range, a few of them near 0.
      const int64_t v = r % 20 == 0 ? static_cast<int64_t>(random() % 1000) - 500
                                    : static_cast<int64_t>(random() >> 2) * (random() % 2 ? 1 : -1);
      codes[r] = order_code_of_int(r % 50000 == 0 ? std::numeric_limits<int64_t>::min() : v);
    }
    expect_as_sorted(keys, codes, key_bits, false, key_bits == 0 ? "integers, one key" : "integers, 2^10 keys");
  }
}

TEST(OrderedSelect, ConcentratedValuesAndStrayKeysAreLeftToTheSort) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const int64_t rows = 100000;
  std::vector<uint64_t> keys(rows), codes(rows, order_code_of_float(42.5));
  for (int64_t r = 0; r < rows; ++r) keys[r] = static_cast<uint64_t>(r % 4);
  EXPECT_FALSE(selected(keys, codes, 2, true, kPicks).has_value()) << "every value equal";
  for (int64_t r = 0; r < rows; ++r) codes[r] = order_code_of_int(r);
  EXPECT_TRUE(selected(keys, codes, 2, false, kPicks).has_value()) << "spread integers";
  keys[rows / 2] = 4;  // beyond 2 bits
  EXPECT_FALSE(selected(keys, codes, 2, false, kPicks).has_value()) << "a key beyond the keys' bits";
  EXPECT_FALSE(selected(keys, codes, kSelectMaxKeyBits + 1, false, kPicks).has_value()) << "keys too wide";
}

}  // namespace
}  // namespace tally::gpu
