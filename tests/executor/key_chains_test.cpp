// Hash chains (executor/operators/key_chains.hpp): the batch hashing and the
// batch probe a scan's join-key test uses must answer as the row forms the
// other lookups use on the same chains (key_hash, KeyChains::find), for
// integer, composite integer, and integer + text keys with NULLs and duplicates.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "executor/operators/key_chains.hpp"

namespace tally::executor {
namespace {

// An int8 key, and a second column: 0 none, 1 text, 2 int4.
std::vector<Vector> make_keys(std::mt19937_64& rng, size_t rows, int second, int range) {
  std::vector<Vector> keys;
  keys.emplace_back(SqlType{TypeId::int8});
  keys.back().nulls.assign(rows, 0);
  if (second != 0) {
    keys.emplace_back(SqlType{second == 1 ? TypeId::text : TypeId::int4});
    keys.back().nulls.assign(rows, 0);
  }
  for (size_t r = 0; r < rows; ++r) {
    keys[0].ints.push_back(static_cast<int64_t>(rng() % range) - range / 2);
    keys[0].nulls[r] = rng() % 11 == 0;
    if (second == 1) keys[1].texts.push_back("k" + std::to_string(rng() % 3));
    if (second == 2) keys[1].ints.push_back(static_cast<int64_t>(rng() % 3));
    if (second != 0) keys[1].nulls[r] = rng() % 13 == 0;
  }
  for (auto& k : keys) k.count = rows;
  return keys;
}

TEST(KeyChains, BatchHashesAndProbeAnswerAsTheRowForms) {
  std::mt19937_64 rng(5);
  for (const int second : {0, 1, 2}) {
    const std::vector<Vector> build = make_keys(rng, 3000, second, 4000);
    const std::vector<Vector> probe = make_keys(rng, 5000, second, 8000);
    std::vector<uint64_t> hashes(probe[0].count);
    key_hashes(probe, 0, 2000, hashes.data());
    key_hashes(probe, 2000, probe[0].count, hashes.data() + 2000);
    for (size_t r = 0; r < probe[0].count; ++r) ASSERT_EQ(hashes[r], key_hash(probe, r)) << r;
    KeyChains chains;
    chains.build(build, build[0].count);
    std::vector<uint32_t> want, got;
    for (size_t r = 0; r < probe[0].count; ++r) {
      if (chains.find(build, probe, r) != kNullRow) want.push_back(static_cast<uint32_t>(r));
    }
    chains.matching_rows(build, probe, probe[0].count, got);
    EXPECT_GT(want.size(), 100u);
    EXPECT_LT(want.size(), probe[0].count / 2);
    EXPECT_EQ(got, want);
  }
}

// One integer key over a narrow span is tested through its bitmap
// (KeyChains::bits): exact at the span's edges, past them on both sides, at
// the int64 extremes, for NULL probes and a probe of another integer width;
// a key too sparse for a bit per value gets a bit per bucket of values,
// checked against the chains.
TEST(KeyChains, KeyBitmapIsAnExactMembershipTest) {
  auto column = [](TypeId type, std::vector<int64_t> values, std::vector<uint8_t> nulls) {
    Vector v(SqlType{type});
    v.ints = std::move(values);
    v.nulls = std::move(nulls);
    v.count = v.ints.size();
    return v;
  };
  std::vector<Vector> build;
  build.push_back(column(TypeId::int8, {100, 163, 164, 227, 5000, 0}, {0, 0, 0, 0, 0, 1}));
  KeyChains chains;
  chains.build(build, 6);
  ASSERT_FALSE(chains.bits.empty());
  EXPECT_EQ(chains.bits_min, 100);
  EXPECT_EQ(chains.bits_span, 4901u);
  std::vector<Vector> probe;
  probe.push_back(column(TypeId::int4,
                         {99, 100, 101, 163, 164, 165, 227, 4999, 5000, 5001, INT64_MIN, INT64_MAX, 0, 100},
                         {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  std::vector<uint32_t> got{7777};  // matching_rows appends
  chains.matching_rows(build, probe, probe[0].count, got);
  EXPECT_EQ(got, (std::vector<uint32_t>{7777, 1, 3, 4, 6, 8}));
  std::vector<uint32_t> want;
  for (size_t r = 0; r < probe[0].count; ++r) {
    if (chains.find(build, probe, r) != kNullRow) want.push_back(static_cast<uint32_t>(r));
  }
  EXPECT_EQ(std::vector<uint32_t>(got.begin() + 1, got.end()), want);

  // A few keys over a wide span: a bit per bucket of values, the set ones
  // looked up in the chains (2 shares 1's bucket, 999999999 shares 1e9's).
  std::vector<Vector> sparse;
  sparse.push_back(column(TypeId::int8, {1, 1'000'000'000}, {0, 0}));
  KeyChains bucketed;
  bucketed.build(sparse, 2);
  EXPECT_GT(bucketed.bits_shift, 0u);
  std::vector<uint32_t> found{5};
  std::vector<Vector> probe2;
  probe2.push_back(column(TypeId::int8, {1, 2, 1'000'000'000, 999'999'999, -5, INT64_MAX, 1}, {0, 0, 0, 0, 0, 0, 1}));
  bucketed.matching_rows(sparse, probe2, 7, found);
  EXPECT_EQ(found, (std::vector<uint32_t>{5, 0, 2}));
  // A key spanning all of int64: buckets still, every answer checked.
  std::vector<Vector> extremes;
  extremes.push_back(column(TypeId::int8, {INT64_MIN, INT64_MAX, 0}, {0, 0, 0}));
  KeyChains wide;
  wide.build(extremes, 3);
  std::vector<Vector> probe3;
  probe3.push_back(column(TypeId::int8, {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX}, {0, 0, 0, 0, 0, 0, 0}));
  std::vector<uint32_t> found3;
  wide.matching_rows(extremes, probe3, 7, found3);
  EXPECT_EQ(found3, (std::vector<uint32_t>{0, 3, 6}));
}

// The chains and the bitmap made on several threads (a build side past the
// parallel threshold) are the ones one thread makes: every bucket's rows
// linked in the same order, the same bits, for one integer key with NULLs
// and duplicates and for a composite key.
// A composite integer key: a bitmap of each key column whose held values
// fill at most half of its span (KeyChains::column_bits) rules probe rows
// out before the hash; the answer stays the chains' (find), NULLs and
// values past the span included, serial and parallel builds alike.
TEST(KeyChains, CompositeKeyColumnBitmapsKeepTheAnswer) {
  std::mt19937_64 rng(17);
  auto keys = [&](size_t rows, int64_t sparse_range, int64_t offset) {
    std::vector<Vector> k;
    k.emplace_back(SqlType{TypeId::int4});  // sparse: a few values of a wide span
    k.emplace_back(SqlType{TypeId::int8});  // dense: every value of a narrow one
    k[0].nulls.assign(rows, 0);
    k[1].nulls.assign(rows, 0);
    for (size_t r = 0; r < rows; ++r) {
      k[0].ints.push_back(offset + static_cast<int64_t>(rng() % static_cast<uint64_t>(sparse_range)) * 37);
      k[1].ints.push_back(static_cast<int64_t>(rng() % 4));
      k[0].nulls[r] = rng() % 17 == 0;
      k[1].nulls[r] = rng() % 19 == 0;
    }
    for (auto& v : k) v.count = rows;
    return k;
  };
  const std::vector<Vector> build = keys(300000, 2000, 0);  // 2,000 values of a 74,000-wide span
  const std::vector<Vector> probe = keys(40000, 2100, -370);
  for (const int threads : {1, 4}) {
    KeyChains chains;
    std::vector<uint64_t> hashes(build[0].count);
    key_hashes(build, 0, build[0].count, hashes.data());
    chains.build_parallel(build, build[0].count, hashes.data(), threads);
    ASSERT_EQ(chains.column_bits.size(), 1u);
    EXPECT_EQ(chains.column_bits[0].column, 0u);
    EXPECT_TRUE(chains.bits.empty());
    std::vector<uint32_t> want, got;
    for (size_t r = 0; r < probe[0].count; ++r) {
      if (chains.find(build, probe, r) != kNullRow) want.push_back(static_cast<uint32_t>(r));
    }
    chains.matching_rows(build, probe, probe[0].count, got);
    EXPECT_GT(want.size(), 1000u);
    EXPECT_EQ(got, want) << threads;
  }
}

// A join's key test (candidate_rows) keeps every row that matches. Where its
// lookups in the chains rule out a fiftieth of the rows the column bitmaps
// let through, it stops looking up after its sample and keeps the rest of
// the bitmaps' rows (the join checks them again); where they rule out half,
// it keeps looking up and answers as matching_rows.
TEST(KeyChains, CandidateRowsKeepEveryMatchAndLookUpWhileItRulesRowsOut) {
  constexpr int64_t kHeld = 5000;
  auto pairs = [](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<Vector> keys{Vector(SqlType{TypeId::int8}), Vector(SqlType{TypeId::int4})};
    keys[0].ints = a;
    keys[1].ints = b;
    keys[0].count = keys[1].count = a.size();
    return keys;
  };
  // Held (3i, 5 (i mod 100)): each column's held values fill a third and a
  // fifth of its span, so each gets a bitmap.
  std::vector<int64_t> ha, hb;
  for (int64_t i = 0; i < kHeld; ++i) {
    ha.push_back(3 * i);
    hb.push_back(5 * (i % 100));
  }
  const std::vector<Vector> held = pairs(ha, hb);
  KeyChains chains;
  chains.build(held, held[0].count);
  ASSERT_EQ(chains.column_bits.size(), 2u);
  for (const int64_t every : {50, 2}) {
    KeyChains fresh = chains;  // counts its lookups afresh
    size_t matching = 0, kept = 0, missing = 0;
    for (int64_t block = 0; block < 20; ++block) {
      // Every `every`-th row pairs a held first column with another row's
      // second: both bits are set, the pair is not held.
      std::vector<int64_t> pa, pb;
      for (int64_t j = 0; j < 10000; ++j) {
        const int64_t i = (block * 10000 + j) % kHeld;
        pa.push_back(3 * i);
        pb.push_back(5 * ((i + (j % every == 0 ? 1 : 0)) % 100));
      }
      const std::vector<Vector> probe = pairs(pa, pb);
      std::vector<uint32_t> want, got;
      fresh.matching_rows(held, probe, pa.size(), want);
      fresh.candidate_rows(held, probe, pa.size(), got);
      ASSERT_TRUE(std::includes(got.begin(), got.end(), want.begin(), want.end())) << every << " " << block;
      matching += want.size();
      kept += got.size();
      missing += pa.size() - want.size();
    }
    EXPECT_GT(missing, 1000u);
    if (every == 2) {
      EXPECT_EQ(kept, matching);
    } else {
      EXPECT_GT(kept, matching + missing / 2);  // past the sample, not looked up
      EXPECT_LT(kept, matching + missing);      // the sample was
    }
  }
}

TEST(KeyChains, ParallelBuildMatchesTheSerialBuild) {
  std::mt19937_64 rng(11);
  for (const int second : {0, 2}) {
    const std::vector<Vector> keys = make_keys(rng, 400000, second, 300000);
    const size_t rows = keys[0].count;
    std::vector<uint64_t> hashes(rows);
    key_hashes(keys, 0, rows, hashes.data());
    KeyChains serial, parallel;
    serial.build(keys, rows, hashes.data());
    parallel.build_parallel(keys, rows, hashes.data(), 4);
    EXPECT_EQ(parallel.mask, serial.mask);
    EXPECT_TRUE(parallel.head == serial.head);
    EXPECT_TRUE(parallel.next == serial.next);
    EXPECT_EQ(parallel.bits, serial.bits);
    EXPECT_EQ(parallel.bits_min, serial.bits_min);
    EXPECT_EQ(parallel.bits_span, serial.bits_span);
    EXPECT_EQ(parallel.bits.empty(), second != 0);
  }
}

}  // namespace
}  // namespace tally::executor
