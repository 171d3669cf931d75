#include "gpu/rules/variant_rules.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace tally::gpu {
namespace {

// Bytes for the hash kernel's occupancy counter and alignment padding.
constexpr size_t kSharedHeaderBytes = 64;
// Per-lane table copies: a warp's 32 random keys in G slots collide about
// 32*31/(2G) times; with 1024/G copies that stays below one collision.
constexpr uint64_t kReplicaGroupBudget = 1024;
constexpr int kMaxReplicas = 32;
// Shared hash table load: low while the table is small enough, else high.
constexpr int kLowFillPercent = 25;
constexpr int kHighFillPercent = 50;
// Fewest threads per block the shared-memory variants use (they size
// blocks_per_sm from shared memory first, then fill the SM with threads).
constexpr int kMinSharedThreads = 256;
// Below this many rows a chunk is too small to amortize a sort or a shared
// table's initialization and flush.
constexpr uint64_t kSmallChunkRows = 1u << 16;
// Partitioned variant at two blocks per SM: each block gets the SM's threads
// divided by 2 * this, i.e. a quarter of them, for the generic kernel (48
// registers per thread at 2 rows, ptxas sm_90: two full-SM blocks exceed the
// register file). The count+sum kernel (32 registers) takes half the SM's
// threads per block, measured faster than a quarter at large G; the
// launcher's occupancy check still clamps to one block where registers do
// not allow two.
constexpr int kPartitionPairThreadDivisor = 2;
constexpr int kPartitionCountSumPairThreadDivisor = 1;
// Rows per thread of the partitioned variant. 4 measures a few percent faster
// at large G, but then PartitionsOutgrowTheirTables sees no table growth (its
// partitions no longer overflow, for a reason not understood), so the rule
// keeps 2 until that is explained.
constexpr int kPartitionRowsPerThread = 2;
// CUB's onesweep radix sort handles 8 key bits per pass (4- and 8-byte keys):
// partition bits cost in whole passes over the rows.
constexpr int kRadixBitsPerPass = 8;
// Dictionary (shared hash for sparse keys): room for the estimate plus 1/8
// and a few keys (an estimate a little low still finds room); a cuckoo table
// with two choices at 45% load (insertion succeeds with high probability
// below 50%); the miss-path table a quarter of that (keys the sample did not
// see); 8 sampled rows per key, so a key of frequency 1/G is missed with
// probability e^-8 (its rows then take the miss path), and at least 2^15 rows.
constexpr uint64_t kDictionaryIdSlackDivisor = 8;
constexpr uint64_t kDictionaryIdMinSlack = 16;
constexpr double kDictionaryLoad = 0.45;
constexpr uint64_t kDictionaryExtraDivisor = 4;
constexpr uint64_t kDictionaryMinExtraSlots = 32;
constexpr uint64_t kDictionarySamplesPerId = 8;
constexpr uint64_t kDictionaryMinSamples = uint64_t{1} << 15;
// Rows per thread of the dictionary's count+sum kernel: two 16-byte loads of
// keys and two of values in flight per thread (rpt 8 measures faster than 4
// at every sparse G up to 2^12 although its 40-48 registers admit fewer
// threads). The any-lanes kernel keeps 4: at 8 it needs
// 127 registers.
constexpr int kDictionaryCountSumRowsPerThread = 8;
// Slots are 32-bit indices with two sentinels; far beyond shared memory anyway.
constexpr uint64_t kDictionaryMaxIds = uint64_t{1} << 24;

uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

int floor_log2(uint64_t x) { return x <= 1 ? 0 : 63 - std::countl_zero(x); }

size_t key_bytes(const GroupBySpec& spec) { return spec.key_type == KeyType::int32 ? 4 : 8; }

int ceil_log2(uint64_t x) { return x <= 1 ? 0 : 64 - std::countl_zero(x - 1); }

// count(*) + sum of one 32-bit column: the lanes of the count+sum kernels.
bool count_sum_lanes(const LanePlan& plan) {
  return plan.lanes.size() == 2 && plan.lanes[0].kind == LaneKind::count_rows &&
         plan.lanes[1].kind == LaneKind::sum32 && plan.lanes[1].column == 0;
}

}  // namespace

size_t dense_shared_bytes(const GroupBySpec&, const LanePlan& plan, uint64_t slots) {
  return (slots + 2) * plan.shared_bytes_per_slot() + kSharedHeaderBytes;
}

size_t hash_shared_bytes(const GroupBySpec& spec, const LanePlan& plan, uint64_t slots) {
  return (slots + 2) * (plan.shared_bytes_per_slot() + key_bytes(spec)) + kSharedHeaderBytes;
}

uint32_t dense_slots_fitting(const GroupBySpec&, const LanePlan& plan, size_t budget) {
  if (budget <= kSharedHeaderBytes) return 0;
  const uint64_t n = (budget - kSharedHeaderBytes) / plan.shared_bytes_per_slot();
  return n < 2 ? 0 : static_cast<uint32_t>(std::min<uint64_t>(n - 2, UINT32_MAX - 2));
}

uint32_t hash_slots_fitting(const GroupBySpec& spec, const LanePlan& plan, size_t budget) {
  if (budget <= kSharedHeaderBytes) return 0;
  const uint64_t n = (budget - kSharedHeaderBytes) / (plan.shared_bytes_per_slot() + key_bytes(spec));
  return n < 2 ? 0 : static_cast<uint32_t>(std::min<uint64_t>(n - 2, UINT32_MAX - 2));
}

DictionarySizing dictionary_sizing(const GroupBySpec&, uint64_t estimated_groups) {
  const uint64_t est = std::max<uint64_t>(estimated_groups, 1);
  const uint64_t ids = std::min(kDictionaryMaxIds, est + est / kDictionaryIdSlackDivisor + kDictionaryIdMinSlack);
  DictionarySizing z;
  z.ids = static_cast<uint32_t>(ids);
  z.slots = static_cast<uint32_t>(round_up(static_cast<uint64_t>(std::ceil(ids / kDictionaryLoad)), 4));
  z.extra_slots = static_cast<uint32_t>(round_up(std::max(kDictionaryMinExtraSlots, ids / kDictionaryExtraDivisor), 4));
  z.set_slots = static_cast<uint32_t>(round_up(2 * ids, 4));
  return z;
}

size_t dictionary_shared_bytes(const GroupBySpec& spec, const LanePlan& plan, const DictionarySizing& z,
                               uint64_t replicas) {
  const uint64_t slots = (static_cast<uint64_t>(z.slots) + z.extra_slots + 2) * replicas;
  return slots * plan.shared_bytes_per_slot() + (static_cast<uint64_t>(z.slots) + z.extra_slots) * key_bytes(spec) +
         kSharedHeaderBytes;
}

size_t dictionary_build_shared_bytes(const GroupBySpec& spec, const DictionarySizing& z) {
  return (static_cast<uint64_t>(z.set_slots) + z.slots) * key_bytes(spec) + kSharedHeaderBytes;
}

uint64_t dictionary_sample_rows(const DictionarySizing& z, uint64_t rows) {
  return std::min(rows, std::max(kDictionaryMinSamples, kDictionarySamplesPerId * z.ids));
}

bool can_use_dictionary(const GroupBySpec& spec, const DeviceInfo& d, uint64_t estimated_groups) {
  const uint64_t est = std::max<uint64_t>(estimated_groups, 1);
  if (est + est / kDictionaryIdSlackDivisor + kDictionaryIdMinSlack > kDictionaryMaxIds) return false;
  const DictionarySizing z = dictionary_sizing(spec, est);
  const LanePlan plan = plan_lanes(spec);
  return dictionary_shared_bytes(spec, plan, z, 1) <= shared_budget_per_block(d, 1) &&
         dictionary_build_shared_bytes(spec, z) <= d.shared_memory_per_block_optin;
}

size_t shared_budget_per_block(const DeviceInfo& d, int blocks_per_sm) {
  const size_t per_sm = d.shared_memory_per_sm / static_cast<size_t>(std::max(1, blocks_per_sm));
  const size_t usable = per_sm > d.reserved_shared_memory_per_block ? per_sm - d.reserved_shared_memory_per_block : 0;
  return std::min(usable, d.shared_memory_per_block_optin);
}

bool can_use(Variant v, const GroupBySpec& spec, const DeviceInfo& d, const ChunkFacts& facts, std::string* why) {
  const LanePlan plan = plan_lanes(spec);
  switch (v) {
    case Variant::dense: {
      if (!facts.key_range) {
        if (why) *why = "dense needs the chunk's key range";
        return false;
      }
      const uint64_t range = facts.key_range->size();
      const uint32_t fit = dense_slots_fitting(spec, plan, shared_budget_per_block(d, 1));
      if (range > fit) {
        if (why) *why = "key range " + std::to_string(range) + " exceeds " + std::to_string(fit) + " shared slots";
        return false;
      }
      return true;
    }
    case Variant::shared_hash:
    case Variant::partitioned_hash: {
      // Any chunk runs (rows that find no room go to the global table), but the
      // kernel needs room for at least one tile's worth of slots.
      const uint32_t fit = hash_slots_fitting(spec, plan, shared_budget_per_block(d, 1));
      if (fit < 64) {
        if (why) *why = "shared memory holds too few hash slots for these aggregates";
        return false;
      }
      return true;
    }
    case Variant::sort:
      return true;
    case Variant::global_hash:
      return true;
  }
  return false;
}

Variant choose_variant(const GroupBySpec& spec, const DeviceInfo& d, const ChunkFacts& facts) {
  if (can_use(Variant::dense, spec, d, facts)) return Variant::dense;
  const LanePlan plan = plan_lanes(spec);
  const uint32_t fit = hash_slots_fitting(spec, plan, shared_budget_per_block(d, 1));
  const VariantConfig c = default_launch_config(Variant::shared_hash, spec, d, facts);
  if (static_cast<double>(facts.estimated_groups) <= fit * c.fill() ||
      can_use_dictionary(spec, d, facts.estimated_groups))
    return Variant::shared_hash;
  if (facts.rows < kSmallChunkRows) return Variant::global_hash;
  return Variant::partitioned_hash;
}

VariantConfig default_launch_config(Variant v, const GroupBySpec& spec, const DeviceInfo& d, const ChunkFacts& facts) {
  const LanePlan plan = plan_lanes(spec);
  VariantConfig c;
  const int max_threads_sm = std::max(d.max_threads_per_sm, 64);
  switch (v) {
    case Variant::dense:
    case Variant::shared_hash: {
      const bool dense = v == Variant::dense;
      c.hash = dense ? HashKind::identity : HashKind::murmur;
      c.launch.rows_per_thread = 4;
      const uint64_t groups = dense ? (facts.key_range ? facts.key_range->size() : 0)
                                    : std::max<uint64_t>(facts.estimated_groups, 1);
      // A warp waits for its longest linear probe: at 50% load the longest of
      // 32 probes is several times the mean (11 of 32 lanes active at
      // G = 2^10). Run the table at kLowFillPercent while it
      // still leaves room for two blocks per SM, and only where few replicas
      // are used (with many, the larger table costs blocks per SM instead:
      // G = 2^6 measured 1.7 ms at 50%, 2.0 ms at 25%).
      c.launch.fill_factor_percent = kHighFillPercent;
      if (!dense && groups >= kReplicaGroupBudget / 4) {
        const uint64_t low = static_cast<uint64_t>(static_cast<double>(groups) * 100 / kLowFillPercent) + 16;
        if (hash_shared_bytes(spec, plan, low) + d.reserved_shared_memory_per_block <= d.shared_memory_per_sm / 2)
          c.launch.fill_factor_percent = kLowFillPercent;
      }
      const uint64_t slots = dense ? groups : static_cast<uint64_t>(static_cast<double>(groups) / c.fill()) + 16;
      // Sparse keys whose groups fit run with a key dictionary (the launcher
      // makes the same choice from the estimate): size for its layout.
      const bool dictionary = !dense && can_use_dictionary(spec, d, groups);
      const DictionarySizing z = dictionary ? dictionary_sizing(spec, groups) : DictionarySizing{};
      const auto bytes_for = [&](uint64_t replicas) {
        if (dictionary) return dictionary_shared_bytes(spec, plan, z, replicas) + d.reserved_shared_memory_per_block;
        return (dense ? dense_shared_bytes(spec, plan, (slots + 2) * replicas - 2)
                      : hash_shared_bytes(spec, plan, (slots + 2) * replicas - 2)) +
               d.reserved_shared_memory_per_block;
      };
      int replicas = static_cast<int>(std::clamp<uint64_t>(
          std::bit_floor(std::max<uint64_t>(kReplicaGroupBudget / std::max<uint64_t>(groups, 1), 1)), 1, kMaxReplicas));
      while (replicas > 1 && bytes_for(static_cast<uint64_t>(replicas)) > shared_budget_per_block(d, 1)) replicas /= 2;
      c.shared_replicas = replicas;
      if (dictionary && count_sum_lanes(plan)) c.launch.rows_per_thread = kDictionaryCountSumRowsPerThread;
      const size_t bytes = bytes_for(static_cast<uint64_t>(replicas));
      const int by_smem = static_cast<int>(std::max<size_t>(1, d.shared_memory_per_sm / std::max<size_t>(bytes, 1)));
      c.launch.blocks_per_sm = std::clamp(by_smem, 1, std::max(1, max_threads_sm / kMinSharedThreads));
      c.launch.threads_per_block = std::min(d.max_threads_per_block, max_threads_sm / c.launch.blocks_per_sm) / 32 * 32;
      c.warp_preaggregate = false;
      break;
    }
    case Variant::partitioned_hash: {
      c.launch.rows_per_thread = kPartitionRowsPerThread;
      const bool dense_keys = facts.key_range && dense_key_range(*facts.key_range, facts.estimated_groups);
      // Dense key ranges partition into contiguous sub-ranges: identity hashing
      // is collision-free there, so the table can run fuller.
      c.hash = dense_keys ? HashKind::identity : HashKind::murmur;
      c.launch.fill_factor_percent = dense_keys ? 90 : 70;
      // Enough partitions that one partition's expected groups (with slack)
      // plus a tile of new keys fit one block's shared table, and about one
      // partition per resident block at least. Two blocks per SM overlap one
      // block's table initialization and flush with the other's rows, but
      // halve the table; take them unless that costs another radix pass.
      // count(*) + sum(int4 NOT NULL): the launcher runs the count+sum kernel
      // when the chunk has no NULL keys either (a key column known to hold
      // NULLs runs the generic kernel: configure for that one).
      const bool count_sum = count_sum_lanes(plan) && !spec.columns.empty() && !spec.columns[0].may_have_nulls &&
                             spec.columns[0].type == ValueType::int32 && !spec.key_may_have_nulls.value_or(false);
      const int pair_divisor = count_sum ? kPartitionCountSumPairThreadDivisor : kPartitionPairThreadDivisor;
      int best_passes = 1 << 20;
      for (int bps = 2; bps >= 1; --bps) {
        // Two blocks of the generic kernel take a quarter of the SM's threads
        // each: two of half the SM exceed the register file (the occupancy
        // check then keeps one 1024-thread block per SM); two of the
        // count+sum kernel take half each.
        const int tpb =
            std::min({1024, d.max_threads_per_block, max_threads_sm / bps / (bps > 1 ? pair_divisor : 1)}) /
            32 * 32;
        if (tpb < 32) continue;
        const uint32_t slots = hash_slots_fitting(spec, plan, shared_budget_per_block(d, bps));
        const double per_partition = (slots * c.fill() - static_cast<double>(tpb) * c.launch.rows_per_thread) /
                                     kPartitionSlack;
        if (per_partition < 1) continue;
        const uint64_t parts = static_cast<uint64_t>(
            std::ceil(static_cast<double>(std::max<uint64_t>(facts.estimated_groups, 1)) / per_partition));
        const int bits = std::clamp(std::max(ceil_log2(parts), floor_log2(static_cast<uint64_t>(d.sm_count) * bps)),
                                    1, kMaxPartitionBits);
        const int passes = (bits + kRadixBitsPerPass - 1) / kRadixBitsPerPass;
        if (passes < best_passes) {
          best_passes = passes;
          c.launch.blocks_per_sm = bps;
          c.launch.threads_per_block = tpb;
          c.partition_bits = bits;
        }
      }
      if (best_passes == 1 << 20) {  // no table fits a tile: the launcher clamps
        c.launch.blocks_per_sm = 1;
        c.launch.threads_per_block = std::min(1024, std::min(d.max_threads_per_block, max_threads_sm)) / 32 * 32;
        c.partition_bits = kMaxPartitionBits;
      }
      break;
    }
    case Variant::global_hash:
      c.launch.threads_per_block = 256;
      c.launch.blocks_per_sm = std::max(1, max_threads_sm / c.launch.threads_per_block);
      c.launch.rows_per_thread = 4;
      c.launch.fill_factor_percent = 50;
      c.hash = HashKind::murmur;
      break;
    case Variant::sort:
      c.launch.threads_per_block = 256;
      c.launch.blocks_per_sm = std::max(1, max_threads_sm / c.launch.threads_per_block);
      c.launch.rows_per_thread = 4;
      break;
  }
  return c;
}

TableOptions default_table_options(Variant v, const GroupBySpec&, const DeviceInfo&, const ChunkFacts& facts) {
  TableOptions t;
  t.estimated_groups = std::max<uint64_t>(facts.estimated_groups, 1);
  t.max_fill = 0.5;
  t.hash = HashKind::murmur;
  // A range hash (slot from the key's offset in its range) puts each group
  // of a dense range in its own slot, and the groups in the first slots
  // only: a million groups with three sums touch 32 MB of the table, which
  // the L2 holds, where a murmur hash spreads them over all of its 64 MB and
  // probes past collisions. It spreads the groups only where they fill the
  // range: the packed keys of a skewed first column (ClickBench's
  // SearchEngineID, zero on most rows) or a sparse range put most groups on
  // a small share of the slots, and linear probing runs down long clusters
  // of them.
  if (facts.key_range && dense_key_range(*facts.key_range, facts.estimated_groups) &&
      (v == Variant::dense || v == Variant::partitioned_hash || v == Variant::global_hash ||
       v == Variant::shared_hash)) {
    t.hash = HashKind::range;
    t.key_range_hint = *facts.key_range;
  }
  return t;
}

}  // namespace tally::gpu
