#pragma once
// The CPU engine's sizing constants and the helpers that size its state from
// the cache and the aggregates (variant choice, radix partition counts).
#include <cstddef>
#include <cstdint>
#include <unistd.h>
#include <utility>

#include "common/aggregate_engine.hpp"
#include "executor/cpu/state_set.hpp"

namespace tally::executor::cpu {

// Key ranges up to this many slots may use a dense variant; up to
// kDenseMaxRange when the groups fill at least a quarter of the range (then
// arrays cost no more than a hash table would).
constexpr int64_t kDenseAlwaysRange = int64_t{1} << 20;
constexpr int64_t kDenseMaxRange = int64_t{1} << 24;
// Rows per thread below which a chunk is processed by one thread (thread
// start-up would cost more than it saves).
constexpr size_t kMinRowsPerThread = 1 << 14;
// Radix partitions per merge thread of the thread-local hash variant: enough
// to balance skewed partitions.
constexpr int kPartitionsPerThread = 8;
// Radix variants: at most this many partitions, so the scatter writes to few
// enough streams to stay within the L1/L2 write-combining capacity.
constexpr size_t kMaxRadixPartitions = 1024;
// Thread-local state up to this many L2 sizes per thread still beats radix
// partitioning (measured with cpu_engine_bench: 64K groups x 5 aggregates,
// 6 MB per thread, ran 2.3x faster thread-local; 1M groups, 40+ MB, ran
// faster partitioned).
constexpr uint64_t kLocalStateL2Multiple = 8;
// Escalating out of the thread-local hash variant while most rows so far
// began a group: the final group count is taken as this many times the
// groups seen (sizes the hash-radix partitions).
constexpr uint64_t kGrowingGroupsFactor = 4;
// The thread-local hash variant checks its state size every this many rows
// (large enough that the two threads' start-up is amortized).
constexpr size_t kEscalationCheckRows = 1 << 17;
// Early escalation: the share of a worker's rows that began a new group above
// which its groups are taken to keep growing with the input (64K rows over
// 64K groups give 0.63, over 1M groups 0.97).
constexpr double kNewGroupFraction = 0.9;
// Used when the L2 size cannot be read from the system.
constexpr uint64_t kFallbackL2Bytes = 1 << 20;

inline uint64_t l2_cache_bytes() {
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? static_cast<uint64_t>(l2) : kFallbackL2Bytes;
}

inline uint64_t bytes_per_group(const AggregationSpec& spec) {
  uint64_t bytes = 8;  // key (hash) or seen flag + slack (dense)
  for (const auto& a : spec.aggregates) {
    visit_fields(a.op, [&](auto member) { bytes += sizeof((std::declval<PartialStates&>().*member)[0]); });
  }
  return bytes;
}

inline size_t ceil_log2(uint64_t x) {
  size_t bits = 0;
  while ((uint64_t{1} << bits) < x) ++bits;
  return bits;
}

}  // namespace tally::executor::cpu
