#include "gpu/rules/cold_start_rules.hpp"

#include <gtest/gtest.h>

#include "gpu/rules/device_info.hpp"

namespace tally::gpu {
namespace {

// Published properties of two GPUs, a recent one with a large L2 and an old
// one with a small L2 (the rules must react to them, not to a name).
DeviceInfo big_gpu() {
  DeviceInfo d;
  d.name = "big";
  d.compute_major = 9;
  d.sm_count = 132;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.shared_memory_per_block_optin = 227 * 1024;
  d.shared_memory_per_sm = 228 * 1024;
  d.l2_bytes = 50 * 1024 * 1024;
  d.total_memory = 80ull << 30;
  d.driver_version = 12040;
  return d;
}

DeviceInfo small_gpu() {
  DeviceInfo d;
  d.name = "small";
  d.compute_major = 3;
  d.compute_minor = 5;
  d.sm_count = 14;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 16;
  d.shared_memory_per_block_optin = 48 * 1024;
  d.shared_memory_per_sm = 48 * 1024;
  d.l2_bytes = 1536 * 1024;
  d.total_memory = 6ull << 30;
  d.driver_version = 11000;
  return d;
}

AggregationShape groups(double g) {
  AggregationShape s;
  s.estimated_groups = g;
  return s;
}

TEST(ColdStartRules, SmallTablesUseSharedMemory) {
  const auto order = rule_variant_order(big_gpu(), groups(1000));
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.front(), Variant::shared_hash);
}

TEST(ColdStartRules, SharedMemoryThresholdComesFromTheDevice) {
  // 10k groups = 320 KB at 50 %: too big for either GPU's block; 2k groups =
  // 64 KB fits the big GPU's 227 KB but not the small one's 48 KB.
  EXPECT_EQ(rule_variant_order(big_gpu(), groups(2000)).front(), Variant::shared_hash);
  EXPECT_EQ(rule_variant_order(small_gpu(), groups(2000)).front(), Variant::global_hash);
  EXPECT_EQ(rule_variant_order(big_gpu(), groups(10'000)).front(), Variant::global_hash);
  AggregationShape dense = groups(100);
  dense.dense_key_range = true;
  EXPECT_EQ(rule_variant_order(big_gpu(), dense).front(), Variant::dense);
}

TEST(ColdStartRules, FillFactorRules) {
  EXPECT_LT(rule_fill_factor_percent(big_gpu(), groups(1000)), 50);  // the whole L2 as table
  EXPECT_EQ(rule_fill_factor_percent(big_gpu(), groups(10'000'000)), 50);
  EXPECT_EQ(rule_fill_factor_percent(small_gpu(), groups(100'000'000)), 83);  // 3.2 GB > 6 GB / 8
}

TEST(DeviceInfo, FingerprintSeparatesDevices) {
  auto a = big_gpu();
  auto b = big_gpu();
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  b.driver_version = 12050;
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  b = big_gpu();
  b.sm_count = 114;  // another model of the same name
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  EXPECT_NE(a.fingerprint(), small_gpu().fingerprint());
}

TEST(ColdStartRules, SortIsExpectedFarSlowerOnlyWhileTheHashTableFitsL2) {
  // 2^16 groups x 20-byte slots at 50% fill = 2.6 MB: within the big GPU's
  // 50 MB L2, beyond the small one's 1.5 MB; 2^22 groups = 168 MB: beyond both.
  AggregationShape s = groups(65536);
  s.key_bytes = 4;
  s.state_bytes = 16;
  EXPECT_TRUE(rules_expect_far_slower(big_gpu(), s, Variant::sort));
  EXPECT_FALSE(rules_expect_far_slower(small_gpu(), s, Variant::sort));
  EXPECT_FALSE(rules_expect_far_slower(big_gpu(), s, Variant::global_hash));
  s.estimated_groups = 1 << 22;
  EXPECT_FALSE(rules_expect_far_slower(big_gpu(), s, Variant::sort));
}

TEST(ColdStartRules, PriorSlowdownIsTwoPassesPerRadixDigitOfTheKey) {
  AggregationShape s = groups(65536);
  s.key_bytes = 4;
  s.state_bytes = 16;
  EXPECT_DOUBLE_EQ(rules_prior_slowdown(big_gpu(), s, Variant::sort), 8);  // 4 digits, read + write each
  s.key_bytes = 8;
  EXPECT_DOUBLE_EQ(rules_prior_slowdown(big_gpu(), s, Variant::sort), 16);
  EXPECT_DOUBLE_EQ(rules_prior_slowdown(big_gpu(), s, Variant::global_hash), 1);     // no prior: the race decides
  EXPECT_DOUBLE_EQ(rules_prior_slowdown(small_gpu(), s, Variant::sort), 1);  // its table is beyond L2 there
}

}  // namespace
}  // namespace tally::gpu
