#include "gpu/tuner/cold_start_rules.hpp"

#include <gtest/gtest.h>

namespace tally::gpu {
namespace {

// Published properties of two GPUs (the rules must react to them, not to a name).
DeviceProperties h100() {
  DeviceProperties d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.compute_major = 9;
  d.sm_count = 132;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.shared_memory_per_block = 227 * 1024;
  d.shared_memory_per_sm = 228 * 1024;
  d.l2_cache_bytes = 50 * 1024 * 1024;
  d.global_memory_bytes = 80ll << 30;
  d.driver_version = 12040;
  return d;
}

DeviceProperties gtx_titan() {
  DeviceProperties d;
  d.name = "GeForce GTX TITAN";
  d.compute_major = 3;
  d.compute_minor = 5;
  d.sm_count = 14;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 16;
  d.shared_memory_per_block = 48 * 1024;
  d.shared_memory_per_sm = 48 * 1024;
  d.l2_cache_bytes = 1536 * 1024;
  d.global_memory_bytes = 6ll << 30;
  d.driver_version = 11000;
  return d;
}

AggregationShape groups(double g) {
  AggregationShape s;
  s.estimated_groups = g;
  return s;
}

TEST(ColdStartRules, SmallTablesUseSharedMemoryAndFullOccupancy) {
  const auto order = rule_variant_order(h100(), groups(1000));
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.front(), kVariantShared);
  const auto c = rule_launch_config(h100(), groups(1000), kVariantShared);
  // 1000 groups x 16 B at 50 % = 32 KB per block: 4 blocks per 228 KB SM... snapped to a power of two.
  EXPECT_EQ(c.blocks_per_sm, 4);
  EXPECT_EQ(c.threads_per_block, 512);
}

TEST(ColdStartRules, SharedMemoryThresholdComesFromTheDevice) {
  // 10k groups = 320 KB at 50 %: too big for either GPU's block; 2k groups =
  // 64 KB fits the H100's 227 KB but not the Titan's 48 KB.
  EXPECT_EQ(rule_variant_order(h100(), groups(2000)).front(), kVariantShared);
  EXPECT_EQ(rule_variant_order(gtx_titan(), groups(2000)).front(), kVariantGlobal);
  EXPECT_EQ(rule_variant_order(h100(), groups(10'000)).front(), kVariantGlobal);
  AggregationShape dense = groups(100);
  dense.dense_key_range = true;
  EXPECT_EQ(rule_variant_order(h100(), dense).front(), kVariantDense);
}

TEST(ColdStartRules, GlobalTableGridFollowsTheL2) {
  // Cache-resident table: all thread slots (the Titan's 14 x 1024 was 2 x 1024 per SM).
  const auto resident = rule_launch_config(gtx_titan(), groups(50'000), kVariantGlobal);
  EXPECT_EQ(resident.threads_per_block * resident.blocks_per_sm, 2048);
  // Larger than 4 x L2 on the Titan: fewer concurrent threads (Karnagel's 112 x 64 = 512 per SM).
  const auto titan_big = rule_launch_config(gtx_titan(), groups(1'000'000), kVariantGlobal);
  EXPECT_EQ(titan_big.threads_per_block * titan_big.blocks_per_sm, 512);
  // The same 1M groups are L2-resident-ish on the H100 (50 MB L2): full occupancy.
  const auto h100_same = rule_launch_config(h100(), groups(1'000'000), kVariantGlobal);
  EXPECT_EQ(h100_same.threads_per_block * h100_same.blocks_per_sm, 2048);
  // Beyond an eighth of device memory: fewer threads still.
  const auto titan_huge = rule_launch_config(gtx_titan(), groups(200'000'000), kVariantGlobal);
  EXPECT_LT(titan_huge.threads_per_block * titan_huge.blocks_per_sm, titan_big.threads_per_block * titan_big.blocks_per_sm);
}

TEST(ColdStartRules, FillFactorRules) {
  EXPECT_LT(rule_fill_factor_percent(h100(), groups(1000)), 50);  // the whole L2 as table
  EXPECT_EQ(rule_fill_factor_percent(h100(), groups(10'000'000)), 50);
  EXPECT_EQ(rule_fill_factor_percent(gtx_titan(), groups(100'000'000)), 83);  // 3.2 GB > 6 GB / 8
}

TEST(DeviceProperties, FingerprintSeparatesDevices) {
  auto a = h100();
  auto b = h100();
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  b.driver_version = 12050;
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  b = h100();
  b.sm_count = 114;  // H100 PCIe
  EXPECT_NE(a.fingerprint(), b.fingerprint());
  EXPECT_NE(a.fingerprint(), gtx_titan().fingerprint());
}

TEST(ColdStartRules, SortIsExpectedFarSlowerOnlyWhileTheHashTableFitsL2) {
  // 2^16 groups x 20-byte slots at 50% fill = 2.6 MB: within the H100's 50 MB
  // L2, beyond the GTX Titan's 1.5 MB; 2^22 groups = 168 MB: beyond both.
  AggregationShape s = groups(65536);
  s.key_bytes = 4;
  s.state_bytes = 16;
  EXPECT_TRUE(rules_expect_far_slower(h100(), s, kVariantSort));
  EXPECT_FALSE(rules_expect_far_slower(gtx_titan(), s, kVariantSort));
  EXPECT_FALSE(rules_expect_far_slower(h100(), s, kVariantGlobal));
  s.estimated_groups = 1 << 22;
  EXPECT_FALSE(rules_expect_far_slower(h100(), s, kVariantSort));
}

TEST(ColdStartRules, PriorSlowdownIsTwoPassesPerRadixDigitOfTheKey) {
  AggregationShape s = groups(65536);
  s.key_bytes = 4;
  s.state_bytes = 16;
  EXPECT_DOUBLE_EQ(rules_prior_slowdown(h100(), s, kVariantSort), 8);  // 4 digits, read + write each
  s.key_bytes = 8;
  EXPECT_DOUBLE_EQ(rules_prior_slowdown(h100(), s, kVariantSort), 16);
  EXPECT_DOUBLE_EQ(rules_prior_slowdown(h100(), s, kVariantGlobal), 1);     // no prior: the race decides
  EXPECT_DOUBLE_EQ(rules_prior_slowdown(gtx_titan(), s, kVariantSort), 1);  // its table is beyond L2 there
}

}  // namespace
}  // namespace tally::gpu
