#pragma once
// The search space of GPU GROUP BY: which kernel variant runs a chunk and with
// which launch parameters. Kernels never choose their own configuration; the
// tuner (gpu/tuner/) or the rule-based default (gpu/rules/variant_rules.hpp) does, and the
// host launcher checks it against the device and reports what it had to change.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/rules/variant.hpp"
#include "gpu/tuner/launch_config.hpp"

namespace tally::gpu {

enum class HashKind {
  identity,  // key modulo table size: collision-free for dense key ranges
  murmur,    // murmur3 finalizer: robust for any key distribution
  range,     // global table only: (key - min) >> shift, order-preserving, so the
             // flushes of a key partition land in one small region of the table
};

// The tuner's LaunchConfig (threads per block, blocks per SM, fill factor,
// rows per thread: gpu/tuner/launch_config.hpp) plus the parameters only
// some variants have.
struct VariantConfig {
  LaunchConfig launch;             // rows_per_thread: 1, 2, 4 or 8 (rows loaded before the first is aggregated)
  HashKind hash = HashKind::murmur;
  bool warp_preaggregate = false;  // combine equal keys inside a warp before the atomics
  int partition_bits = 0;          // partitioned_hash: radix bits (0 = derive from the estimate)
  int shared_replicas = 1;         // dense/shared_hash: per-lane table copies (power of two <= 32)

  double fill() const { return launch.fill_factor_percent / 100.0; }
};

// What the launcher actually ran for one chunk.
struct LaunchReport {
  Variant variant = Variant::global_hash;
  VariantConfig used;
  std::vector<std::string> adjustments;  // each clamp or change, in words
  uint32_t shared_slots = 0;             // shared-memory table / array entries per block
  int grid_blocks = 0;
  int table_growths = 0;                 // global table rehashes caused by this chunk
  uint64_t spilled = 0;                  // rows or partial groups that overflowed the table
};

std::string_view hash_name(HashKind h);
std::string describe(const VariantConfig& c);

}  // namespace tally::gpu
