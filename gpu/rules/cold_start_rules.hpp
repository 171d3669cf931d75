#pragma once
// Cold-start rules: the starting variant order, the race's priors and the
// search grid when the tuning cache has nothing for this device, operator and
// cardinality (the starting launch configuration is variant_rules.hpp's).
// They follow Karnagel et al. (ADMS'15, "Simple Rule-based Optimizer") but
// every threshold is computed from the device's own properties (shared
// memory, L2 size, SM count, thread limits): no constant tuned on one GPU.
#include <cstdint>
#include <string>
#include <vector>

#include "gpu/rules/device_info.hpp"
#include "gpu/rules/variant.hpp"
#include "gpu/tuner/launch_config.hpp"
#include "gpu/tuner/search_space.hpp"

namespace tally::gpu {

// What the rules need to know about the query.
struct AggregationShape {
  double estimated_groups = 1;
  int key_bytes = 8;             // width of the (packed) key
  int state_bytes = 8;           // bytes of aggregate state per group
  bool dense_key_range = false;  // min/max say a direct-indexed array fits
};

// Bytes of one hash-table slot.
inline int64_t slot_bytes(const AggregationShape& s) { return s.key_bytes + s.state_bytes; }

// Hash-table fill factor in percent (Karnagel's table-size rules): the table
// takes the whole L2 when that keeps the fill below 50 %; 50 % while the table
// is at most an eighth of device memory; 83 % beyond, to save memory.
int32_t rule_fill_factor_percent(const DeviceInfo& device, const AggregationShape& shape);

// Variants the rules allow, in the order they prefer them: dense when the
// key range allows; shared-memory when a block-private table fits the shared
// memory of one block; global; sort. gpu/'s can_use predicates filter further.
std::vector<Variant> rule_variant_order(const DeviceInfo& device, const AggregationShape& shape);

// Whether the rules expect `variant` to be far slower than the hash variants
// for this shape, so that a cold query's race gives it only a small screen
// (ChunkTuner): sort while the hash table (at the normal fill factor) fits
// the device's L2. Karnagel's measurements: a cache-resident hash table
// beats sorting by several times, since the sort moves every row several
// times through device memory while the hash variants touch it once. A
// prior, not a verdict: the variant is still screened and can still win.
bool rules_expect_far_slower(const DeviceInfo& device, const AggregationShape& shape, Variant variant);

// How many times slower per row than the best variant the rules expect
// `variant` to be for this shape (1: no prior, the race decides). A prior
// for sizing its race screen (ChunkTuner), not a verdict; it must rank the
// variants, not predict their times, and it errs low (a prior too low costs
// a larger screen, one too high only an undecided small screen and then the
// full one: ChunkTuner::judge_screen).
//  - sort while the hash table fits L2 (rules_expect_far_slower) makes one
//    pass over every row's key and value per radix digit, each a read and a
//    write through device memory, where a cache-resident hash table reads
//    each row once: 2 x the key's digits (8 for a 4-byte key).
//  - global while more than a warp's worth of the device's resident threads
//    (SMs x threads per SM) update each group at once: its atomics on one
//    group's state serialize in L2 across warps, where shared-memory and
//    dense tables are block-private (Karnagel: global hashing at few groups
//    is the slowest of his variants by an order of magnitude). The queue of
//    U updaters per group costs 1 + log2(U), not U: a warp stalled on its
//    atomic stops issuing, so fewer are in flight than resident (1 + log2
//    ranks global last at few groups, and gives no prior once a warp's worth
//    of updaters or fewer share a group).
//  - partitioned while the table fits a block's shared memory (the
//    shared-memory variant's condition, so partitioning buys no locality):
//    its partition pass reads, writes and reads again every row, 3 passes
//    where a block-private table reads it once.
double rules_prior_slowdown(const DeviceInfo& device, const AggregationShape& shape, Variant variant);

// The grid searched for a variant on a device: threads per block 32..max
// (powers of two), blocks per SM 1..max resident blocks, rows per thread
// 1..8, and fill factor 25/50/83 % for the shared-memory hash variants
// (shared_memory, partitioned). Dimensions a variant's time does not depend
// on are left out: their value comes from the space's base.
SearchSpace default_search_space(const DeviceInfo& device, Variant variant);

}  // namespace tally::gpu
