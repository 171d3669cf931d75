#include "gpu/tuner/cold_start_rules.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace tally::gpu {

namespace {
// Cache line size of every NVIDIA GPU since Fermi (one probe touches one line).
constexpr int64_t kCacheLineBytes = 128;
// Karnagel's fill factors: 50 % normal, 83 % when memory is tight.
constexpr int32_t kFillNormal = 50;
constexpr int32_t kFillDense = 83;
// Streaming variants (dense, sort) at full occupancy with blocks a quarter of
// the maximum: more, smaller blocks balance the tail of a chunk better.
constexpr int32_t kStreamingBlockDivisor = 4;
// Karnagel's L2-bound grid, 112 x 64 on 14 SMs: 8 blocks per SM share the
// concurrent-thread budget (a shape, not a device constant).
constexpr int32_t kL2BoundBlocksPerSm = 8;
// Beyond TLB reach his best grid had 8x fewer threads (112 x 8 vs 112 x 64).
constexpr int64_t kTlbBoundThreadDivisor = 8;
// Tables beyond this share of device memory exceed the TLB reach (his "2 GB
// problem" on a 6 GB GTX Titan) and get the 83 % fill factor.
constexpr int64_t kTlbBoundMemoryDivisor = 8;
// Bits one radix-sort pass sorts by (CUB's onesweep digit on every NVIDIA GPU it tunes for).
constexpr int kRadixDigitBits = 8;

// The partitioned variant's passes over a row (read it, write it to its
// partition, read it back) where a block-private table reads it once.
constexpr double kPartitionedRowPasses = 3;

int32_t floor_pow2(int64_t v) { return static_cast<int32_t>(std::bit_floor(static_cast<uint64_t>(std::max<int64_t>(v, 1)))); }

int32_t nearest_pow2(int64_t v) {  // in log scale
  const int32_t lo = floor_pow2(v);
  return static_cast<double>(v) / lo >= std::sqrt(2.0) ? lo * 2 : lo;
}

int64_t table_bytes(const AggregationShape& s, int32_t fill_percent) {
  return static_cast<int64_t>(std::ceil(std::max(1.0, s.estimated_groups) * static_cast<double>(slot_bytes(s)) * 100.0 / fill_percent));
}
}  // namespace

int32_t rule_fill_factor_percent(const DeviceProperties& device, const AggregationShape& shape) {
  const double groups_bytes = std::max(1.0, shape.estimated_groups) * static_cast<double>(slot_bytes(shape));
  if (device.l2_cache_bytes > 0 && groups_bytes * 2 <= static_cast<double>(device.l2_cache_bytes)) {
    // Rule 1: the table is the L2 size; report its fill, at least 1 %.
    return std::max(1, static_cast<int32_t>(100.0 * groups_bytes / static_cast<double>(device.l2_cache_bytes)));
  }
  if (table_bytes(shape, kFillNormal) <= device.global_memory_bytes / kTlbBoundMemoryDivisor) return kFillNormal;
  return kFillDense;
}

std::vector<std::string> rule_variant_order(const DeviceProperties& device, const AggregationShape& shape) {
  std::vector<std::string> order;
  if (shape.dense_key_range) order.push_back(kVariantDense);
  if (table_bytes(shape, kFillNormal) <= device.shared_memory_per_block) order.push_back(kVariantShared);
  order.push_back(kVariantGlobal);
  order.push_back(kVariantSort);
  return order;
}

bool rules_expect_far_slower(const DeviceProperties& device, const AggregationShape& shape, const std::string& variant) {
  return variant == kVariantSort && device.l2_cache_bytes > 0 && table_bytes(shape, kFillNormal) <= device.l2_cache_bytes;
}

double rules_prior_slowdown(const DeviceProperties& device, const AggregationShape& shape, const std::string& variant) {
  if (variant == kVariantGlobal) {
    // Concurrent updaters per group: every resident thread of the device
    // updates one of G groups' states in device memory at a time.
    const double resident = static_cast<double>(std::max(device.sm_count, 1)) * std::max(device.max_threads_per_sm, 1);
    const double updaters = resident / std::max(1.0, shape.estimated_groups);
    if (updaters <= std::max(device.warp_size, 1)) return 1;
    return 1.0 + std::log2(updaters);
  }
  if (variant == kVariantPartitioned) {
    if (table_bytes(shape, kFillNormal) > device.shared_memory_per_block) return 1;
    return kPartitionedRowPasses;
  }
  if (!rules_expect_far_slower(device, shape, variant)) return 1;
  const int digits = (8 * std::max(shape.key_bytes, 1) + kRadixDigitBits - 1) / kRadixDigitBits;
  return 2.0 * digits;
}

LaunchConfig rule_launch_config(const DeviceProperties& device, const AggregationShape& shape, const std::string& variant) {
  LaunchConfig c;
  const int32_t max_tpb = floor_pow2(std::max(device.warp_size, device.max_threads_per_block));
  const int32_t full_bps = std::max(1, device.max_threads_per_sm / max_tpb);
  c.fill_factor_percent = rule_fill_factor_percent(device, shape);
  if (variant == kVariantShared) {
    const int64_t table = std::max<int64_t>(1, table_bytes(shape, kFillNormal));
    const int64_t per_sm = device.shared_memory_per_sm > 0 ? device.shared_memory_per_sm : device.shared_memory_per_block;
    c.blocks_per_sm = std::clamp<int32_t>(floor_pow2(per_sm / table), 1, std::max(1, device.max_blocks_per_sm));
    c.threads_per_block = std::clamp<int32_t>(floor_pow2(device.max_threads_per_sm / c.blocks_per_sm), device.warp_size, max_tpb);
    return c;
  }
  if (variant == kVariantDense || variant == kVariantSort) {
    c.threads_per_block = std::max<int32_t>(device.warp_size, max_tpb / kStreamingBlockDivisor);
    c.blocks_per_sm = std::max(1, device.max_threads_per_sm / c.threads_per_block);
    return c;
  }
  const int64_t table = table_bytes(shape, c.fill_factor_percent);
  if (device.l2_cache_bytes <= 0 || table <= 4 * device.l2_cache_bytes) {
    // Karnagel's 14 x 1024 on a GTX Titan = every thread slot of every SM.
    c.threads_per_block = max_tpb;
    c.blocks_per_sm = full_bps;
    return c;
  }
  // Concurrent threads whose cache lines fill half of L2 (112 x 64 on the Titan
  // was 7168 threads x 128 B = 0.875 MB of its 1.5 MB L2).
  int64_t threads = device.l2_cache_bytes / (2 * kCacheLineBytes);
  if (table > device.global_memory_bytes / kTlbBoundMemoryDivisor) threads /= kTlbBoundThreadDivisor;
  const int32_t per_sm = nearest_pow2(std::max<int64_t>(device.warp_size, threads / std::max(1, device.sm_count)));
  c.threads_per_block = std::clamp<int32_t>(floor_pow2(per_sm / kL2BoundBlocksPerSm), device.warp_size, max_tpb);
  c.blocks_per_sm = std::clamp<int32_t>(floor_pow2(per_sm / c.threads_per_block), 1, std::max(1, device.max_blocks_per_sm));
  return c;
}

}  // namespace tally::gpu
