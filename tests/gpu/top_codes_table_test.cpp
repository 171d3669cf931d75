// The top-codes table (gpu/engine/top_codes_table.cuh) against the sort's
// picks on the host (common/ordered_rows.hpp's pick_from_segments over every
// row sorted by key and code): int32 and int64 keys (the int64 key whose
// sort key is the table's free marker among them), NULL keys, NULL values
// and a FILTER, duplicate codes, the k largest and the k smallest, ranks
// beyond a key's rows, and a key estimate far too low, which sends rows to
// the overflow buffers and rebuilds the table; the direct table over the
// keys' range, and over a range that misses keys (which overflow and
// rebuild the same way); a table that counts every row (rows without a
// value among each key's, keys with none among the keys, through the
// overflow and the rebuild too). Skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "common/ordered_code.hpp"
#include "common/ordered_rows.hpp"
#include "gpu/engine/top_codes_table.cuh"
#include "gpu/rules/device_info.hpp"
#include "tests/gpu/device_copy.hpp"

namespace tally::gpu {
namespace {

using testing::to_device;

struct Case {
  bool wide_keys = false;
  bool largest = true;
  std::vector<double> ranks;  // the picks' nth positions
  uint64_t expected_keys = 0;
  int keys = 1000;
  int64_t rows = 200000;
  bool every_row = false;  // count_every_row
};

// The keys' range a table is told (as keys, not sort keys): its entries
// then are direct where the range allows; `direct` says whether they must be.
struct Range {
  std::optional<std::pair<int64_t, int64_t>> keys;
  bool direct = false;
};

// One picked block per key, keyed for comparison; the NULL key's under
// "NULL". A block: its values' count, every row's where counted, then its
// picks (none for a key without values, whose block is not read).
std::map<std::string, std::vector<uint64_t>> blocks_of(const KeyedPicks& p) {
  std::map<std::string, std::vector<uint64_t>> out;
  const auto per = static_cast<size_t>(p.per_key);
  const bool null_block = p.null_key_rows > 0 || p.null_key_every_row > 0;
  const size_t blocks = p.keys.size() + (null_block ? 1 : 0);
  for (size_t b = 0; b < blocks; ++b) {
    const bool keyed = b < p.keys.size();
    std::vector<uint64_t> block;
    block.push_back(keyed ? p.counts[b] : p.null_key_rows);
    if (!p.every_row.empty() || p.null_key_every_row > 0) block.push_back(keyed ? p.every_row[b] : p.null_key_every_row);
    for (size_t j = 0; j < per && block[0] > 0; ++j) {
      block.push_back(p.codes[b * per + j]);
      block.push_back(p.positions[b * per + j]);
    }
    out[keyed ? std::to_string(p.keys[b]) : "NULL"] = block;
  }
  return out;
}

void expect_as_sorted_picks(const Case& c, int* rebuilds, const Range& told = Range{}) {
  std::mt19937_64 random(c.keys * 7 + c.rows + (c.wide_keys ? 1 : 0) + (c.largest ? 2 : 0));
  std::vector<int32_t> keys32(c.rows);
  std::vector<int64_t> keys64(c.rows);
  std::vector<uint8_t> key_valid(c.rows), value_valid(c.rows), filter(c.rows);
  std::vector<double> values(c.rows);
  for (int64_t r = 0; r < c.rows; ++r) {
    const int key = static_cast<int>(random() % static_cast<uint64_t>(c.keys));
    keys32[r] = key - c.keys / 2;
    // INT64_MAX's sort key is all ones, the table's free marker.
    keys64[r] = key == 0 ? std::numeric_limits<int64_t>::max() : key == 1 ? std::numeric_limits<int64_t>::min() : int64_t{key} << 40;
    key_valid[r] = random() % 50 != 0;
    value_valid[r] = random() % 20 != 0;
    filter[r] = random() % 10 != 0;
    values[r] = static_cast<double>(random() % 500) / 4 - 30;  // many duplicates
  }
  std::vector<OrderedPick> picks;
  for (const double rank : c.ranks) picks.push_back(OrderedPick{OrderedPick::Kind::nth, rank, c.largest});

  // The reference: every kept row's (key, code), sorted, picked on the host.
  // Where every row is counted, each key's rows that pass the FILTER.
  std::map<int64_t, std::vector<uint64_t>> by_key;
  std::map<int64_t, uint64_t> rows_by_key;
  std::vector<uint64_t> null_codes;
  uint64_t null_key_every_row = 0;
  for (int64_t r = 0; r < c.rows; ++r) {
    if (!filter[r]) continue;
    const int64_t key = c.wide_keys ? keys64[r] : keys32[r];
    if (c.every_row) {
      if (!key_valid[r]) ++null_key_every_row;
      else ++rows_by_key[key];
    }
    if (!value_valid[r]) continue;
    const uint64_t code = order_code_of_float(values[r]);
    if (!key_valid[r]) null_codes.push_back(code);
    else by_key[key].push_back(code);
  }
  KeyedSegments segments;
  for (auto& [key, codes] : by_key) {
    std::sort(codes.begin(), codes.end());
    segments.keys.push_back(key);
    segments.counts.push_back(codes.size());
    segments.codes.insert(segments.codes.end(), codes.begin(), codes.end());
  }
  std::sort(null_codes.begin(), null_codes.end());
  segments.codes.insert(segments.codes.end(), null_codes.begin(), null_codes.end());
  segments.null_key_rows = null_codes.size();
  KeyedPicks expected = pick_from_segments(segments, picks);
  if (c.every_row) {
    // Keys whose values are all NULL come too, with no values and a block
    // not read, before the NULL key's block.
    const auto per = static_cast<size_t>(expected.per_key);
    const auto null_block = expected.codes.begin() + static_cast<std::ptrdiff_t>(expected.keys.size() * per);
    std::vector<uint64_t> null_codes_picked(null_block, expected.codes.end());
    std::vector<uint64_t> null_positions(expected.positions.begin() + static_cast<std::ptrdiff_t>(expected.keys.size() * per),
                                         expected.positions.end());
    expected.codes.resize(expected.keys.size() * per);
    expected.positions.resize(expected.keys.size() * per);
    for (const auto& [key, rows] : rows_by_key) {
      if (by_key.count(key) != 0) continue;
      expected.keys.push_back(key);
      expected.counts.push_back(0);
      expected.codes.insert(expected.codes.end(), per, 0);
      expected.positions.insert(expected.positions.end(), per, 0);
    }
    expected.codes.insert(expected.codes.end(), null_codes_picked.begin(), null_codes_picked.end());
    expected.positions.insert(expected.positions.end(), null_positions.begin(), null_positions.end());
    for (const int64_t key : expected.keys) expected.every_row.push_back(rows_by_key[key]);
    expected.null_key_every_row = null_key_every_row;
  }

  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const auto shape = top_codes_shape(picks);
  ASSERT_TRUE(shape.has_value());
  KeyedPicks got;
  {
    std::optional<SortKeyRange> range;
    const int kind = c.wide_keys ? kKeyInt64 : kKeyInt32;
    if (told.keys) range = SortKeyRange{sort_key_of(told.keys->first, kind), sort_key_of(told.keys->second, kind)};
    TopCodesTable table(*shape, c.expected_keys, static_cast<uint64_t>(c.rows), stream, range);
    if (c.every_row) table.count_every_row();
    EXPECT_EQ(table.made_direct(), told.direct);
    CollectArgs a;
    a.keys = c.wide_keys ? static_cast<const void*>(to_device(keys64)) : static_cast<const void*>(to_device(keys32));
    a.key_wide = c.wide_keys ? 1 : 0;
    a.key_kind = c.wide_keys ? kKeyInt64 : kKeyInt32;
    a.key_valid = to_device(key_valid);
    a.values = to_device(values);
    a.value_kind = kFloat64;
    a.value_valid = to_device(value_valid);
    a.filter = to_device(filter);
    a.out_keys = to_device(std::vector<uint64_t>(c.rows));
    a.out_codes = to_device(std::vector<uint64_t>(c.rows));
    a.count = reinterpret_cast<unsigned long long*>(to_device(std::vector<uint64_t>(1, 0)));
    a.out_bare_keys = to_device(std::vector<uint64_t>(c.rows));
    a.bare_count = reinterpret_cast<unsigned long long*>(to_device(std::vector<uint64_t>(1, 0)));
    // In two chunks, as the collector adds them.
    const int64_t half = c.rows / 2;
    table.add(a, half, stream);
    CollectArgs rest = a;
    auto shift = [&](const auto* p, size_t width) { return reinterpret_cast<const uint8_t*>(p) + half * width; };
    rest.keys = shift(a.keys, c.wide_keys ? 8 : 4);
    rest.key_valid = shift(a.key_valid, 1);
    rest.values = shift(a.values, 8);
    rest.value_valid = shift(a.value_valid, 1);
    rest.filter = shift(a.filter, 1);
    table.add(rest, c.rows - half, stream);
    unsigned long long overflow = 0, bare = 0;
    ASSERT_EQ(cudaMemcpy(&overflow, a.count, sizeof overflow, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(&bare, a.bare_count, sizeof bare, cudaMemcpyDeviceToHost), cudaSuccess);
    if (!c.every_row) EXPECT_EQ(bare, 0u);
    got = table.picked(picks, TopCodesOverflow{a.out_keys, a.out_codes, overflow, a.out_bare_keys, bare}, a.key_kind, stream);
    *rebuilds = table.rebuilds();
    for (const void* p : {a.keys, static_cast<const void*>(a.key_valid), a.values, static_cast<const void*>(a.value_valid),
                          static_cast<const void*>(a.filter), static_cast<const void*>(a.out_keys),
                          static_cast<const void*>(a.out_codes), static_cast<const void*>(a.count),
                          static_cast<const void*>(a.out_bare_keys), static_cast<const void*>(a.bare_count)})
      cudaFree(const_cast<void*>(p));
  }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(got.per_key, expected.per_key);
  EXPECT_EQ(got.null_key_rows, expected.null_key_rows);
  EXPECT_EQ(got.null_key_every_row, expected.null_key_every_row);
  EXPECT_EQ(got.every_row.size(), c.every_row ? got.keys.size() : 0u);
  EXPECT_EQ(blocks_of(got), blocks_of(expected));
}

TEST(GpuTopCodesTable, PicksAsTheSortedRows) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  int rebuilds = 0;
  // The k largest of int32 keys (q8's shape), then with ranks beyond small keys' rows.
  expect_as_sorted_picks(Case{false, true, {0, 1}, 1000}, &rebuilds);
  EXPECT_EQ(rebuilds, 0);
  expect_as_sorted_picks(Case{false, true, {0, 1, 2, 7}, 50000, 50000, 150000}, &rebuilds);
  EXPECT_EQ(rebuilds, 0);
  // The k smallest of int64 keys, INT64_MAX and INT64_MIN among them.
  expect_as_sorted_picks(Case{true, false, {1, 0}, 1000}, &rebuilds);
  EXPECT_EQ(rebuilds, 0);
  expect_as_sorted_picks(Case{true, false, {0}, 0, 20}, &rebuilds);
}

TEST(GpuTopCodesTable, KeysBeyondTheEstimateOverflowAndRebuild) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  int rebuilds = 0;
  // 4096 slots for 100,000 keys: most keys find no slot on the first pass.
  expect_as_sorted_picks(Case{false, true, {0, 1}, 1, 100000, 400000}, &rebuilds);
  EXPECT_EQ(rebuilds, 1);
  expect_as_sorted_picks(Case{true, false, {0, 2}, 1, 30000, 300000}, &rebuilds);
  EXPECT_EQ(rebuilds, 1);
}

TEST(GpuTopCodesTable, DirectOverTheKeysRange) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  int rebuilds = 0;
  // int32 keys from -500 to 499: the range of the statistics, told exactly.
  expect_as_sorted_picks(Case{false, true, {0, 1}, 1000}, &rebuilds, Range{std::make_pair(-500, 499), true});
  EXPECT_EQ(rebuilds, 0);
  // The k smallest, several ranks, a range wider than the keys present.
  expect_as_sorted_picks(Case{false, false, {0, 2, 5}, 20000, 20000, 100000}, &rebuilds,
                         Range{std::make_pair(-20000, 30000), true});
  EXPECT_EQ(rebuilds, 0);
  // A range that misses the lower half of the keys: they overflow, and the
  // rebuilt (hashed) table still answers every key.
  expect_as_sorted_picks(Case{false, true, {0, 1}, 1000}, &rebuilds, Range{std::make_pair(0, 499), true});
  EXPECT_EQ(rebuilds, 1);
  // int64 keys over their whole range (INT64_MIN, INT64_MAX among them):
  // too wide, the table is hashed.
  expect_as_sorted_picks(Case{true, false, {1, 0}, 1000}, &rebuilds,
                         Range{std::make_pair(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()), false});
  EXPECT_EQ(rebuilds, 0);
}

TEST(GpuTopCodesTable, CountsEveryRowWhereAsked) {
  if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  int rebuilds = 0;
  // 5% of the values NULL, about 6 rows a key.
  Case c{false, true, {0, 1}, 50000, 50000, 300000};
  c.every_row = true;
  expect_as_sorted_picks(c, &rebuilds);
  EXPECT_EQ(rebuilds, 0);
  // Few rows a key, so that keys without a value are common.
  c = Case{true, false, {0}, 200000, 200000, 400000};
  c.every_row = true;
  expect_as_sorted_picks(c, &rebuilds);
  EXPECT_EQ(rebuilds, 0);
  // An estimate far too low: rows with and without values overflow, and
  // the rebuilt table counts them all.
  c = Case{false, true, {0, 1}, 1, 100000, 400000};
  c.every_row = true;
  expect_as_sorted_picks(c, &rebuilds);
  EXPECT_EQ(rebuilds, 1);
  // Direct over the range, keys outside it overflowing.
  c = Case{false, true, {0, 1}, 1000};
  c.every_row = true;
  expect_as_sorted_picks(c, &rebuilds, Range{std::make_pair(0, 499), true});
  EXPECT_EQ(rebuilds, 1);
}

}  // namespace
}  // namespace tally::gpu
