// Hash chains (executor/operators/key_chains.hpp): the batch hashing and the
// batch probe a scan's join-key test uses must answer as the row forms the
// other lookups use on the same chains (key_hash, KeyChains::find), for
// integer, composite integer, and integer + text keys with NULLs and duplicates.
#include <gtest/gtest.h>

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
    key_hashes(probe, 2000, probe[0].count, hashes.data());
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

}  // namespace
}  // namespace tally::executor
