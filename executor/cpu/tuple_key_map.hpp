#pragma once
// The host's table of key tuples (AggregationSpec::key_tuple): each distinct
// tuple of key column values (int64 codes, a NULL its own value per column)
// gets a query-local id, so that an engine aggregates over one int64 key.
// Equality is on each column, never on a hash alone, so the grouping is
// exact whatever the columns' ranges.
//
// The tuples are split by hash into a fixed number of partitions, each its
// own table, so that the partitions give ids on several threads at once. A
// tuple's id is its order of first appearance within its partition times the
// partition count, plus the partition: the ids depend on the rows alone,
// never on the thread count, and stay about as dense as one table's.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/aggregate_engine.hpp"

namespace tally::executor::cpu {

class TupleKeyMap {
 public:
  // `columns` key columns (at most kMaxColumns); `expected_groups` sizes
  // the table (0 = unknown; it grows either way).
  TupleKeyMap(size_t columns, uint64_t expected_groups);

  static constexpr size_t kMaxColumns = 32;  // a NULL flag per column in one word

  // The ids of rows [0, chunk.rows) of chunk.key_columns into out[0, rows).
  // Each row's tuple and hash are read on `threads` threads, and the
  // partitions give their rows' ids on `threads` threads, each partition
  // in row order, so the ids do not depend on the thread count.
  void assign(const ChunkInput& chunk, int64_t* out, int threads);

  size_t size() const;
  // Every id given so far, partition by partition.
  std::vector<int64_t> ids() const;

  // For the tuples ids[0, n): per key column their values and validity
  // (AggregationResult::key_codes, key_code_valid).
  void codes_of(const int64_t* ids, size_t n, std::vector<std::vector<int64_t>>& codes,
                std::vector<std::vector<uint8_t>>& valid, int threads) const;

 private:
  static constexpr unsigned kPartitionBits = 6;
  static constexpr size_t kPartitions = size_t{1} << kPartitionBits;
  // One partition's tuples, ids local to it (in order of first appearance).
  struct Partition {
    std::vector<int64_t> codes;    // local id * columns + column; 0 for a NULL
    std::vector<uint32_t> nulls;   // per local id: bit c set = column c NULL
    std::vector<uint64_t> hashes;  // per local id, for growth
    // Open addressing, linear probing: 0 = empty, else the hash's high 32
    // bits above local id + 1 (a different high half rejects without a compare).
    std::vector<uint64_t> slots;
    uint64_t mask = 0;
  };
  static size_t partition_of(uint64_t hash) { return static_cast<size_t>(hash >> (64 - kPartitionBits)); }
  int64_t find_or_insert(Partition& p, const int64_t* tuple, uint32_t nulls, uint64_t hash) const;
  // Ids of the rows `rows` (ascending) of the current chunk, all of partition `part`.
  void assign_partition(size_t part, const uint32_t* rows, size_t count, int64_t* out);
  void grow(Partition& p) const;

  size_t columns_;
  std::vector<Partition> partitions_;
  // The current chunk's rows, row-major, with their NULL flags and hashes,
  // and their row numbers grouped by partition (row order within each).
  std::vector<int64_t> rows_;
  std::vector<uint32_t> row_nulls_;
  std::vector<uint64_t> row_hashes_;
  std::vector<uint32_t> by_partition_;
};

}  // namespace tally::executor::cpu
