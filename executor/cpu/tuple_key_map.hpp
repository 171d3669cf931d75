#pragma once
// The host's table of key tuples (AggregationSpec::key_tuple): each distinct
// tuple of key column values (int64 codes, a NULL its own value per column)
// gets a query-local id, in order of first appearance, so that an engine
// aggregates over one int64 key. Equality is on each column, never on a
// hash alone, so the grouping is exact whatever the columns' ranges.
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
  // Each row's tuple and hash are read on `threads` threads; the ids are
  // then given in row order on the calling thread, so they do not depend
  // on the thread count.
  void assign(const ChunkInput& chunk, int64_t* out, int threads);

  size_t size() const { return nulls_.size(); }

  // For the tuples ids[0, n): per key column their values and validity
  // (AggregationResult::key_codes, key_code_valid).
  void codes_of(const int64_t* ids, size_t n, std::vector<std::vector<int64_t>>& codes,
                std::vector<std::vector<uint8_t>>& valid, int threads) const;

 private:
  int64_t find_or_insert(const int64_t* tuple, uint32_t nulls, uint64_t hash);
  void grow();

  size_t columns_;
  std::vector<int64_t> codes_;    // id * columns_ + column; 0 for a NULL
  std::vector<uint32_t> nulls_;   // per id: bit c set = column c NULL
  std::vector<uint64_t> hashes_;  // per id, for growth
  // Open addressing, linear probing: 0 = empty, else the hash's high 32
  // bits above id + 1 (a different high half rejects without a compare).
  std::vector<uint64_t> slots_;
  uint64_t mask_ = 0;
  // The current chunk's rows, row-major, with their NULL flags and hashes.
  std::vector<int64_t> rows_;
  std::vector<uint32_t> row_nulls_;
  std::vector<uint64_t> row_hashes_;
};

}  // namespace tally::executor::cpu
