// Host-only: variant predicates and rule-based configurations, computed from
// device properties given as input (two different devices, so no rule can be a
// constant that only fits one). Runs without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu/rules/variant_rules.hpp"

namespace tally::gpu {
namespace {

DeviceInfo hopper_like() {
  DeviceInfo d;
  d.name = "hopper-like";
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.shared_memory_per_block = 48 << 10;
  d.shared_memory_per_block_optin = 227 << 10;
  d.shared_memory_per_sm = 228 << 10;
  d.reserved_shared_memory_per_block = 1 << 10;
  d.l2_bytes = 50u << 20;
  d.total_memory = 80ull << 30;
  return d;
}

DeviceInfo small_gpu() {
  DeviceInfo d = hopper_like();
  d.name = "small";
  d.sm_count = 20;
  d.max_threads_per_sm = 1024;
  d.shared_memory_per_block_optin = 64 << 10;
  d.shared_memory_per_sm = 64 << 10;
  d.l2_bytes = 4u << 20;
  return d;
}

GroupBySpec sum_spec() {
  GroupBySpec s;
  s.key_type = KeyType::int32;
  s.columns = {{ValueType::int32, false}};
  s.aggregates = {{AggOp::sum, 0}};
  return s;
}

TEST(VariantRules, DenseNeedsARangeThatFitsSharedMemory) {
  for (const DeviceInfo& d : {hopper_like(), small_gpu()}) {
    const GroupBySpec s = sum_spec();
    const uint32_t fit = dense_slots_fitting(s, plan_lanes(s), shared_budget_per_block(d, 1));
    ASSERT_GT(fit, 0u);
    EXPECT_LE(dense_shared_bytes(s, plan_lanes(s), fit), d.shared_memory_per_block_optin);
    ChunkFacts f;
    f.rows = 1 << 20;
    EXPECT_FALSE(can_use(Variant::dense, s, d, f)) << "no range";
    f.key_range = KeyRange{10, 10 + static_cast<int64_t>(fit) - 1};
    EXPECT_TRUE(can_use(Variant::dense, s, d, f));
    f.key_range = KeyRange{10, 10 + static_cast<int64_t>(fit)};
    std::string why;
    EXPECT_FALSE(can_use(Variant::dense, s, d, f, &why));
    EXPECT_FALSE(why.empty());
  }
}

TEST(VariantRules, SmallerSharedMemoryMeansSmallerThresholds) {
  const GroupBySpec s = sum_spec();
  const LanePlan p = plan_lanes(s);
  EXPECT_GT(hash_slots_fitting(s, p, shared_budget_per_block(hopper_like(), 1)),
            hash_slots_fitting(s, p, shared_budget_per_block(small_gpu(), 1)));
}

TEST(VariantRules, ChoiceFollowsCardinality) {
  const DeviceInfo d = hopper_like();
  const GroupBySpec s = sum_spec();
  ChunkFacts f;
  f.rows = 1 << 24;
  f.key_range = KeyRange{0, 99};
  f.estimated_groups = 100;
  EXPECT_EQ(choose_variant(s, d, f), Variant::dense);
  f.key_range = KeyRange{-(int64_t{1} << 31), (int64_t{1} << 31) - 1};
  EXPECT_EQ(choose_variant(s, d, f), Variant::shared_hash);
  f.estimated_groups = 1 << 22;
  EXPECT_EQ(choose_variant(s, d, f), Variant::partitioned_hash);
  f.rows = 1000;
  EXPECT_EQ(choose_variant(s, d, f), Variant::global_hash);
}

// The global table hashes by the key's offset in its range only where the
// expected groups fill a quarter of the range: packed keys whose first
// column is mostly one value (ClickBench Q14's SearchEngineID, SearchPhrase:
// 8M packed values, 500K groups) would crowd a thirty-second of the slots.
TEST(VariantRules, RangeHashOnlyForDenseRanges) {
  const DeviceInfo d = hopper_like();
  const GroupBySpec s = sum_spec();
  ChunkFacts f;
  f.rows = 1 << 24;
  f.key_range = KeyRange{0, (int64_t{1} << 23) - 1};
  f.estimated_groups = 500000;
  for (const Variant v : {Variant::dense, Variant::partitioned_hash, Variant::global_hash, Variant::shared_hash}) {
    EXPECT_EQ(default_table_options(v, s, d, f).hash, HashKind::murmur) << variant_name(v);
  }
  EXPECT_EQ(default_launch_config(Variant::partitioned_hash, s, d, f).hash, HashKind::murmur);
  f.estimated_groups = 1 << 21;
  for (const Variant v : {Variant::dense, Variant::partitioned_hash, Variant::global_hash, Variant::shared_hash}) {
    EXPECT_EQ(default_table_options(v, s, d, f).hash, HashKind::range) << variant_name(v);
  }
  EXPECT_EQ(default_launch_config(Variant::partitioned_hash, s, d, f).hash, HashKind::identity);
}

TEST(VariantRules, DefaultConfigsRespectDeviceLimits) {
  for (const DeviceInfo& d : {hopper_like(), small_gpu()}) {
    const GroupBySpec s = sum_spec();
    ChunkFacts f;
    f.rows = 1 << 24;
    f.key_range = KeyRange{0, 1000};
    for (uint64_t groups : {1ull, 1000ull, 1ull << 20}) {
      f.estimated_groups = groups;
      for (Variant v : kAllVariants) {
        const VariantConfig c = default_launch_config(v, s, d, f);
        EXPECT_GE(c.launch.threads_per_block, 32);
        EXPECT_LE(c.launch.threads_per_block, d.max_threads_per_block);
        EXPECT_GE(c.launch.blocks_per_sm, 1);
        EXPECT_LE(c.launch.blocks_per_sm * c.launch.threads_per_block, d.max_threads_per_sm);
        if (v == Variant::partitioned_hash) {
          EXPECT_GE(c.partition_bits, 1);
        }
      }
    }
  }
}

// Partitions are sized so that one partition's expected groups (with slack)
// plus a tile of new keys fit one block's shared table, and the bits grow with
// the groups; where the groups allow, one radix pass (8 bits) is enough.
TEST(VariantRules, PartitionBitsFitGroupsInSharedMemory) {
  const DeviceInfo d = hopper_like();
  const GroupBySpec s = sum_spec();
  const LanePlan plan = plan_lanes(s);
  ChunkFacts f;
  f.rows = 1 << 28;
  int previous = 0;
  for (int lg = 10; lg <= 26; lg += 2) {
    f.estimated_groups = uint64_t{1} << lg;
    const VariantConfig c = default_launch_config(Variant::partitioned_hash, s, d, f);
    EXPECT_GE(c.partition_bits, previous) << "G = 2^" << lg;
    previous = c.partition_bits;
    const double per_partition = std::ldexp(1.0, lg - c.partition_bits);
    const double slots = hash_slots_fitting(s, plan, shared_budget_per_block(d, c.launch.blocks_per_sm));
    EXPECT_LE(per_partition * kPartitionSlack + c.launch.threads_per_block * c.launch.rows_per_thread,
              slots * c.fill())
        << "G = 2^" << lg << " bits " << c.partition_bits;
    if (lg <= 18) {
      EXPECT_LE(c.partition_bits, 8) << "G = 2^" << lg;
    }
  }
  EXPECT_GE(previous, 12);
}

// count(*) + sum(int4 NOT NULL) runs the partitioned count+sum kernel, whose
// registers let two blocks of half the SM's threads share an SM; any other
// lane set (here the same sum over a nullable column) keeps a quarter per
// block. Either way one partition's groups plus a tile fit the table.
TEST(VariantRules, PartitionedCountSumTakesHalfTheSmPerBlock) {
  const DeviceInfo d = hopper_like();
  GroupBySpec lean = sum_spec();
  GroupBySpec nullable = sum_spec();
  nullable.columns[0].may_have_nulls = true;
  ChunkFacts f;
  f.rows = 1 << 28;
  f.estimated_groups = 1 << 22;
  const VariantConfig a = default_launch_config(Variant::partitioned_hash, lean, d, f);
  const VariantConfig b = default_launch_config(Variant::partitioned_hash, nullable, d, f);
  EXPECT_EQ(a.launch.blocks_per_sm, 2);
  EXPECT_EQ(a.launch.threads_per_block, d.max_threads_per_sm / 2);
  EXPECT_EQ(b.launch.blocks_per_sm, 2);
  EXPECT_EQ(b.launch.threads_per_block, d.max_threads_per_sm / 4);
  for (const auto& [spec, c] : {std::pair{lean, a}, std::pair{nullable, b}}) {
    const double slots = hash_slots_fitting(spec, plan_lanes(spec), shared_budget_per_block(d, c.launch.blocks_per_sm));
    EXPECT_LE(std::ldexp(1.0, 22 - c.partition_bits) * kPartitionSlack +
                  c.launch.threads_per_block * c.launch.rows_per_thread,
              slots * c.fill());
  }
}

// A key column known to hold NULLs runs the generic partitioned kernel even
// for count(*) + sum(int4 NOT NULL): the rule gives it the generic kernel's
// quarter of the SM per block, and the count+sum kernel's half only when the
// keys are known NULL-free or unknown (the common case, as before).
TEST(VariantRules, NullableKeysGetTheGenericPartitionedConfiguration) {
  const DeviceInfo d = hopper_like();
  ChunkFacts f;
  f.rows = 1 << 28;
  f.estimated_groups = 1 << 22;
  GroupBySpec unknown = sum_spec();
  GroupBySpec no_nulls = sum_spec();
  no_nulls.key_may_have_nulls = false;
  GroupBySpec nulls = sum_spec();
  nulls.key_may_have_nulls = true;
  const VariantConfig u = default_launch_config(Variant::partitioned_hash, unknown, d, f);
  const VariantConfig n = default_launch_config(Variant::partitioned_hash, no_nulls, d, f);
  const VariantConfig k = default_launch_config(Variant::partitioned_hash, nulls, d, f);
  EXPECT_EQ(u.launch.threads_per_block, d.max_threads_per_sm / 2);
  EXPECT_EQ(n.launch.threads_per_block, d.max_threads_per_sm / 2);
  EXPECT_EQ(k.launch.blocks_per_sm, 2);
  EXPECT_EQ(k.launch.threads_per_block, d.max_threads_per_sm / 4);
  // Each still fits one partition's groups plus a tile in its table.
  for (const auto& c : {u, n, k}) {
    const double slots = hash_slots_fitting(unknown, plan_lanes(unknown), shared_budget_per_block(d, c.launch.blocks_per_sm));
    EXPECT_LE(std::ldexp(1.0, 22 - c.partition_bits) * kPartitionSlack +
                  c.launch.threads_per_block * c.launch.rows_per_thread,
              slots * c.fill());
  }
}

// The shared hash runs with a key dictionary (a cuckoo table) wherever
// both its kernels fit one block's shared memory; the default configuration
// then sizes blocks and accumulator copies for the dictionary's layout.
TEST(VariantRules, DictionaryWhereItsGroupsFitSharedMemory) {
  for (const DeviceInfo& d : {hopper_like(), small_gpu()}) {
    const GroupBySpec s = sum_spec();
    const LanePlan plan = plan_lanes(s);
    EXPECT_TRUE(can_use_dictionary(s, d, 1));
    EXPECT_TRUE(can_use_dictionary(s, d, 1000));
    EXPECT_FALSE(can_use_dictionary(s, d, 1 << 20));
    uint64_t largest = 0;
    for (uint64_t g = 1; g < (1u << 20); g += g / 4 + 1)
      if (can_use_dictionary(s, d, g)) largest = g;
    ASSERT_GT(largest, 1000u);
    const DictionarySizing z = dictionary_sizing(s, largest);
    EXPECT_GE(z.ids, largest);
    EXPECT_EQ(z.slots % 4, 0u);
    EXPECT_EQ(z.set_slots % 4, 0u);
    EXPECT_GE(z.slots, 2ull * z.ids) << "cuckoo table at most half full";
    EXPECT_LE(dictionary_shared_bytes(s, plan, z, 1), shared_budget_per_block(d, 1));
    EXPECT_LE(dictionary_build_shared_bytes(s, z), d.shared_memory_per_block_optin);
    EXPECT_LE(dictionary_sample_rows(z, 1000), 1000u);
    EXPECT_GE(dictionary_sample_rows(z, 1ull << 28), 8ull * z.ids);
    for (uint64_t g : {uint64_t{4}, uint64_t{256}, uint64_t{4096}, largest}) {
      if (!can_use_dictionary(s, d, g)) continue;  // 4096 on the small device
      ChunkFacts f;
      f.rows = 1 << 28;
      f.key_range = KeyRange{-(int64_t{1} << 31), (int64_t{1} << 31) - 1};
      f.estimated_groups = g;
      EXPECT_EQ(choose_variant(s, d, f), Variant::shared_hash) << "G = " << g;
      const VariantConfig c = default_launch_config(Variant::shared_hash, s, d, f);
      // The dictionary kernels exist for 2, 4 and 8 rows per thread.
      EXPECT_TRUE(c.launch.rows_per_thread == 2 || c.launch.rows_per_thread == 4 || c.launch.rows_per_thread == 8)
          << "G = " << g;
      const size_t bytes = dictionary_shared_bytes(s, plan, dictionary_sizing(s, g), c.shared_replicas);
      EXPECT_LE(bytes, shared_budget_per_block(d, 1)) << "G = " << g;
      EXPECT_LE(static_cast<size_t>(c.launch.blocks_per_sm) * (bytes + d.reserved_shared_memory_per_block),
                d.shared_memory_per_sm)
          << "G = " << g;
    }
  }
}

TEST(VariantNames, RoundTrip) {
  for (Variant v : kAllVariants) EXPECT_EQ(parse_variant(variant_name(v)), v);
  EXPECT_FALSE(parse_variant("nope"));
}

}  // namespace
}  // namespace tally::gpu
