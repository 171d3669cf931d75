#include "gpu/rules/cold_start_rules.hpp"

#include <algorithm>
#include <cmath>

namespace tally::gpu {

namespace {
// Karnagel's fill factors: 50 % normal, 83 % when memory is tight.
constexpr int32_t kFillNormal = 50;
constexpr int32_t kFillDense = 83;
// Tables beyond this share of device memory exceed the TLB reach (his "2 GB
// problem" on a 6 GB GTX Titan) and get the 83 % fill factor.
constexpr int64_t kTlbBoundMemoryDivisor = 8;
// Bits one radix-sort pass sorts by (CUB's onesweep digit on every NVIDIA GPU it tunes for).
constexpr int kRadixDigitBits = 8;

// The partitioned variant's passes over a row (read it, write it to its
// partition, read it back) where a block-private table reads it once.
constexpr double kPartitionedRowPasses = 3;

// The device's sizes as signed byte counts; a block's shared memory is the
// opt-in maximum, what the kernels are launched with.
int64_t l2(const DeviceInfo& d) { return static_cast<int64_t>(d.l2_bytes); }
int64_t memory(const DeviceInfo& d) { return static_cast<int64_t>(d.total_memory); }
int64_t block_shared(const DeviceInfo& d) { return static_cast<int64_t>(d.shared_memory_per_block_optin); }

// Variants whose kernels keep a hash table in shared memory: the only ones
// whose time depends on the fill factor. Dense and sort have no hash table,
// and the global table's fill factor barely moves its time, so searching it
// would triple the global grid for nothing.
bool fill_factor_matters(Variant v) { return v == Variant::shared_hash || v == Variant::partitioned_hash; }

int64_t table_bytes(const AggregationShape& s, int32_t fill_percent) {
  return static_cast<int64_t>(std::ceil(std::max(1.0, s.estimated_groups) * static_cast<double>(slot_bytes(s)) * 100.0 / fill_percent));
}
}  // namespace

int32_t rule_fill_factor_percent(const DeviceInfo& device, const AggregationShape& shape) {
  const double groups_bytes = std::max(1.0, shape.estimated_groups) * static_cast<double>(slot_bytes(shape));
  if (l2(device) > 0 && groups_bytes * 2 <= static_cast<double>(l2(device))) {
    // Rule 1: the table is the L2 size; report its fill, at least 1 %.
    return std::max(1, static_cast<int32_t>(100.0 * groups_bytes / static_cast<double>(l2(device))));
  }
  if (table_bytes(shape, kFillNormal) <= memory(device) / kTlbBoundMemoryDivisor) return kFillNormal;
  return kFillDense;
}

std::vector<Variant> rule_variant_order(const DeviceInfo& device, const AggregationShape& shape) {
  std::vector<Variant> order;
  if (shape.dense_key_range) order.push_back(Variant::dense);
  if (table_bytes(shape, kFillNormal) <= block_shared(device)) order.push_back(Variant::shared_hash);
  order.push_back(Variant::global_hash);
  order.push_back(Variant::sort);
  return order;
}

bool rules_expect_far_slower(const DeviceInfo& device, const AggregationShape& shape, Variant variant) {
  return variant == Variant::sort && l2(device) > 0 && table_bytes(shape, kFillNormal) <= l2(device);
}

double rules_prior_slowdown(const DeviceInfo& device, const AggregationShape& shape, Variant variant) {
  if (variant == Variant::global_hash) {
    // Concurrent updaters per group: every resident thread of the device
    // updates one of G groups' states in device memory at a time.
    const double resident = static_cast<double>(std::max(device.sm_count, 1)) * std::max(device.max_threads_per_sm, 1);
    const double updaters = resident / std::max(1.0, shape.estimated_groups);
    if (updaters <= std::max(device.warp_size, 1)) return 1;
    return 1.0 + std::log2(updaters);
  }
  if (variant == Variant::partitioned_hash) {
    if (table_bytes(shape, kFillNormal) > block_shared(device)) return 1;
    return kPartitionedRowPasses;
  }
  if (!rules_expect_far_slower(device, shape, variant)) return 1;
  const int digits = (8 * std::max(shape.key_bytes, 1) + kRadixDigitBits - 1) / kRadixDigitBits;
  return 2.0 * digits;
}

SearchSpace default_search_space(const DeviceInfo& device, Variant variant) {
  std::vector<GridAxis> axes = {
      {ConfigDimension::threads_per_block,
       SearchSpace::powers_of_two(std::max(1, device.warp_size), std::max(device.warp_size, device.max_threads_per_block))},
      {ConfigDimension::blocks_per_sm, SearchSpace::powers_of_two(1, std::max(1, device.max_blocks_per_sm))},
      {ConfigDimension::rows_per_thread, {1, 2, 4, 8}}};
  if (fill_factor_matters(variant)) axes.push_back({ConfigDimension::fill_factor_percent, {25, 50, 83}});
  return SearchSpace(std::move(axes));
}

}  // namespace tally::gpu
