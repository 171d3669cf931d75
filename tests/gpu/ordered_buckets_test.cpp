// The percentile selection's arithmetic on the host
// (gpu/engine/ordered_buckets.hpp, shared with its kernels): buckets never
// decrease along sorted codes and spread values of one magnitude (floats
// spread, heavy-tailed, with infinities, NaN, -0, 0, denormals and the
// largest finite values; integers over all of int64), and the selection
// done on the host with the device's functions (each key's histogram, the
// targets' buckets and ranks, the target buckets' rows gathered and sorted)
// picks what the sort of every row picks. Runs without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "common/ordered_code.hpp"
#include "common/ordered_rows.hpp"
#include "gpu/engine/ordered_buckets.hpp"
#include "tests/gpu/sorted_picks.hpp"

namespace tally::gpu {
namespace {

// Floats uniform to 4 digits, normal and small with duplicates, with
// infinities, NaN, -0, 0 and denormals; `tail`: a quarter heavy-tailed of
// both signs; `extremes`: the largest finite values too (the value
// buckets' range is then so wide that their values share a few buckets).
enum class Spread { plain, tail, extremes };

std::vector<double> float_values(uint64_t seed, size_t n, Spread spread) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal(50, 20);
  std::lognormal_distribution<double> tail(0, 3);
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (i % 4) {
      case 0: v[i] = std::round(static_cast<double>(random() % 1000000)) / 1e4; break;
      case 1: v[i] = normal(random); break;
      case 2: v[i] = spread == Spread::plain ? normal(random) : (random() % 2 ? 1 : -1) * tail(random); break;
      default: v[i] = static_cast<double>(static_cast<int64_t>(random() % 201) - 100) / 8; break;
    }
  }
  const double specials[] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), std::nan(""),
                             -0.0, 0.0, std::numeric_limits<double>::denorm_min(), -DBL_MIN, DBL_MAX, -DBL_MAX};
  const size_t count = std::size(specials) - (spread == Spread::extremes ? 0 : 2);
  for (size_t i = 0; i < count && i < n; ++i) v[i * 7 % n] = specials[i];
  return v;
}

// Sorted codes, with the finite values' least and greatest code.
struct Codes {
  std::vector<uint64_t> sorted;
  uint64_t finite_lo = ~uint64_t{0}, finite_hi = 0;
};

Codes float_codes(const std::vector<double>& values) {
  Codes c;
  for (const double v : values) {
    const uint64_t code = order_code_of_float(v);
    c.sorted.push_back(code);
    if (std::isfinite(v)) {
      c.finite_lo = std::min(c.finite_lo, code);
      c.finite_hi = std::max(c.finite_hi, code);
    }
  }
  std::sort(c.sorted.begin(), c.sorted.end());
  return c;
}

// Asserts that the buckets never decrease along `sorted`, and that the
// codes use at least `used` distinct buckets.
void expect_monotone(const std::vector<uint64_t>& sorted, const Buckets& b, int used, const char* what) {
  int last = 0, distinct = 0;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const int bucket = bucket_of(sorted[i], b);
    ASSERT_GE(bucket, last) << what << ": code " << sorted[i];
    ASSERT_LT(bucket, b.count) << what;
    distinct += i == 0 || bucket != last;
    last = bucket;
  }
  EXPECT_GE(distinct, used) << what;
}

TEST(OrderedBuckets, NeverDecreaseAlongSortedCodes) {
  for (const Spread spread : {Spread::plain, Spread::tail, Spread::extremes}) {
    const Codes floats = float_codes(float_values(3, 200000, spread));
    for (const int count : {64, 256, 4096}) {
      const auto by_value = value_buckets(count, floats.finite_lo, floats.finite_hi);
      ASSERT_TRUE(by_value.has_value());
      // Values of one order of magnitude spread over most buckets.
      expect_monotone(floats.sorted, *by_value, spread == Spread::plain ? count / 4 : 3, "floats by value");
      expect_monotone(floats.sorted, code_buckets(count, floats.finite_lo, floats.finite_hi), 3, "floats by code");
      expect_monotone(floats.sorted, code_buckets(count, floats.sorted.front(), floats.sorted.back()), 3, "every float code");
    }
  }
  std::mt19937_64 random(5);
  std::vector<uint64_t> ints;
  for (int i = 0; i < 100000; ++i) ints.push_back(order_code_of_int(static_cast<int64_t>(random())));
  ints.push_back(order_code_of_int(std::numeric_limits<int64_t>::min()));
  ints.push_back(order_code_of_int(std::numeric_limits<int64_t>::max()));
  std::sort(ints.begin(), ints.end());
  expect_monotone(ints, code_buckets(4096, ints.front(), ints.back()), 1024, "integers");
  // A span too narrow to divide by value (one value) has no value buckets.
  EXPECT_FALSE(value_buckets(256, order_code_of_float(2.5), order_code_of_float(2.5)).has_value());
}

// The selection as the device runs it, on the host: per key a histogram,
// locate_targets, the target buckets' rows gathered and sorted, each
// target's code at its rank.
KeyedPicks select_on_host(const std::vector<uint64_t>& keys, const std::vector<uint64_t>& codes, uint64_t key_count, const Buckets& b,
                          const std::vector<OrderedPick>& picks) {
  PickArgs p;
  p.count = static_cast<int>(picks.size());
  p.per = ordered_picks_per_group(picks);
  std::copy(picks.begin(), picks.end(), p.picks);
  std::vector<unsigned> hist(key_count * static_cast<uint64_t>(b.count), 0);
  for (size_t r = 0; r < keys.size(); ++r) ++hist[keys[r] * static_cast<uint64_t>(b.count) + static_cast<uint64_t>(bucket_of(codes[r], b))];
  KeyedPicks out;
  out.per_key = p.per;
  for (uint64_t k = 0; k < key_count; ++k) {
    const unsigned* h = hist.data() + k * static_cast<uint64_t>(b.count);
    uint64_t n = 0;
    for (int i = 0; i < b.count; ++i) n += h[i];
    if (n == 0) continue;
    int bucket[kMaxTargets];
    uint64_t rank[kMaxTargets], position[kMaxTargets];
    const uint64_t gathered = locate_targets(h, b.count, n, p, bucket, rank, position);
    std::vector<uint64_t> rows;
    for (size_t r = 0; r < keys.size(); ++r) {
      if (keys[r] != k) continue;
      const int own = bucket_of(codes[r], b);
      if (std::find(bucket, bucket + p.per, own) != bucket + p.per) rows.push_back(codes[r]);
    }
    EXPECT_EQ(rows.size(), gathered) << "key " << k;
    std::sort(rows.begin(), rows.end());
    out.keys.push_back(static_cast<int64_t>(k));
    out.counts.push_back(n);
    for (int j = 0; j < p.per; ++j) {
      out.codes.push_back(rank[j] < rows.size() ? rows[rank[j]] : 0);
      out.positions.push_back(position[j]);
    }
  }
  return out;
}

using testing::sorted_picks;

void expect_same(const KeyedPicks& got, const KeyedPicks& want, const char* what) {
  EXPECT_EQ(got.keys, want.keys) << what;
  EXPECT_EQ(got.counts, want.counts) << what;
  EXPECT_EQ(std::vector<uint64_t>(got.codes.begin(), got.codes.end()), std::vector<uint64_t>(want.codes.begin(), want.codes.end()))
      << what;
  EXPECT_EQ(got.positions, want.positions) << what;
}

TEST(OrderedBuckets, HostSelectionPicksAsTheSort) {
  const std::vector<OrderedPick> picks = {
      {OrderedPick::Kind::cont, 0.5, false}, {OrderedPick::Kind::cont, 0.0, false}, {OrderedPick::Kind::cont, 1.0, true},
      {OrderedPick::Kind::disc, 0.9, false}, {OrderedPick::Kind::disc, 0.25, true}, {OrderedPick::Kind::cont, 0.37, false},
  };
  std::mt19937_64 random(17);
  for (const uint64_t key_count : {uint64_t{1}, uint64_t{8}, uint64_t{1024}}) {
    const std::vector<double> values =
        float_values(9 + key_count, 60000, key_count == 1 ? Spread::plain : key_count == 8 ? Spread::extremes : Spread::tail);
    std::vector<uint64_t> keys(values.size()), codes(values.size());
    uint64_t lo = ~uint64_t{0}, hi = 0;
    for (size_t r = 0; r < values.size(); ++r) {
      keys[r] = random() % key_count;
      codes[r] = order_code_of_float(values[r]);
      if (std::isfinite(values[r])) {
        lo = std::min(lo, codes[r]);
        hi = std::max(hi, codes[r]);
      }
    }
    const KeyedPicks want = sorted_picks(keys, codes, picks);
    expect_same(select_on_host(keys, codes, key_count, *value_buckets(256, lo, hi), picks), want, "floats by value");
    expect_same(select_on_host(keys, codes, key_count, code_buckets(256, lo, hi), picks), want, "floats by code");
    std::vector<uint64_t> ints(values.size());
    for (size_t r = 0; r < values.size(); ++r) ints[r] = order_code_of_int(static_cast<int64_t>(random() % 2001) - 1000);
    const auto [int_lo, int_hi] = std::minmax_element(ints.begin(), ints.end());
    expect_same(select_on_host(keys, ints, key_count, code_buckets(64, *int_lo, *int_hi), picks), sorted_picks(keys, ints, picks),
                "integers");
  }
}

}  // namespace
}  // namespace tally::gpu
