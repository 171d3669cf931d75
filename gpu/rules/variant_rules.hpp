#pragma once
// Which variants can run a chunk, which one to start with, and the rule-based
// launch configuration used before the tuner has measured anything. Rules are
// computed from device properties (shared memory, SM count, L2), never from
// constants tuned on one GPU. Kept together in one place (STYLE.md).
#include <cstdint>
#include <optional>
#include <string>

#include "gpu/rules/device_info.hpp"
#include "gpu/group_by.hpp"
#include "gpu/group_by_spec.hpp"
#include "gpu/lane_plan.hpp"
#include "gpu/rules/variant_config.hpp"

namespace tally::gpu {

// Partitioned variant: a partition's shared table has room for this many times
// the expected groups per partition (hash partitions of uniform keys vary by
// about the square root of their size), plus one tile of new keys.
inline constexpr double kPartitionSlack = 1.25;
// At most 2^24 partitions (their boundaries are one binary search each).
inline constexpr int kMaxPartitionBits = 24;

struct ChunkFacts {
  uint64_t rows = 0;
  std::optional<KeyRange> key_range;
  uint64_t estimated_groups = 1;
};

// Bytes of dynamic shared memory the dense / hash kernels need for `slots`
// table entries (two special entries, NULL key and empty-marker key, added).
size_t dense_shared_bytes(const GroupBySpec& spec, const LanePlan& plan, uint64_t slots);
size_t hash_shared_bytes(const GroupBySpec& spec, const LanePlan& plan, uint64_t slots);
// Largest slot count whose shared memory fits in `budget` bytes.
uint32_t dense_slots_fitting(const GroupBySpec& spec, const LanePlan& plan, size_t budget);
uint32_t hash_slots_fitting(const GroupBySpec& spec, const LanePlan& plan, size_t budget);

// Shared-memory hash with a key dictionary (kernels/dictionary_kernels.cuh):
// the sizes the rules and the launcher both derive from the estimate.
struct DictionarySizing {
  uint32_t ids = 0;          // distinct sampled keys placed at most: the estimate with slack
  uint32_t slots = 0;        // cuckoo table slots (ids at kDictionaryLoad), a multiple of 4
  uint32_t extra_slots = 0;  // block-private miss-path table (keys the dictionary lacks)
  uint32_t set_slots = 0;    // the build kernel's set of sampled keys, a multiple of 4
};
DictionarySizing dictionary_sizing(const GroupBySpec& spec, uint64_t estimated_groups);
// Dynamic shared memory of the aggregation kernel (`replicas` copies of the
// accumulators) and of the one-block build kernel.
size_t dictionary_shared_bytes(const GroupBySpec& spec, const LanePlan& plan, const DictionarySizing& z,
                               uint64_t replicas);
size_t dictionary_build_shared_bytes(const GroupBySpec& spec, const DictionarySizing& z);
// Rows the build kernel samples from a chunk of `rows` rows.
uint64_t dictionary_sample_rows(const DictionarySizing& z, uint64_t rows);
// Whether the shared-memory hash variant runs with a dictionary for this
// estimate: both its kernels fit one block's shared memory.
bool can_use_dictionary(const GroupBySpec& spec, const DeviceInfo& d, uint64_t estimated_groups);

// Shared memory one block may use when `blocks_per_sm` blocks share an SM.
size_t shared_budget_per_block(const DeviceInfo& d, int blocks_per_sm);

// Side-effect-free predicates, most specialized first: dense, shared_hash,
// partitioned_hash, sort, global_hash. `why` receives the reason for false.
bool can_use(Variant v, const GroupBySpec& spec, const DeviceInfo& d, const ChunkFacts& facts,
             std::string* why = nullptr);

// The variant the rules pick for a chunk.
Variant choose_variant(const GroupBySpec& spec, const DeviceInfo& d, const ChunkFacts& facts);

// The rule-based starting configuration for a variant.
VariantConfig default_launch_config(Variant v, const GroupBySpec& spec, const DeviceInfo& d, const ChunkFacts& facts);

// Global table options: sized from the estimate; an order-preserving hash when
// the key range is known and the variant flushes key partitions (dense,
// partitioned), so each flush lands in one region of the table (L2-resident).
TableOptions default_table_options(Variant v, const GroupBySpec& spec, const DeviceInfo& d, const ChunkFacts& facts);

// Whether `estimated_groups` fill enough of a key range (a quarter) that a
// hash by the key's offset in it (identity, range) meets few collisions.
inline bool dense_key_range(const KeyRange& range, uint64_t estimated_groups) {
  return range.size() > 0 && range.size() <= 4 * std::max<uint64_t>(estimated_groups, 1);
}

}  // namespace tally::gpu
