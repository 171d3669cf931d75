#pragma once
// Hash chains over the rows of key vectors: the lookup structure of a join's
// build side, an IN list and a decorrelated subquery's groups. Rows with a
// NULL key are left out (a NULL key equals nothing).
#include <cstdint>
#include <vector>

#include "executor/operators/chunk_ops.hpp"

namespace tally::executor {

struct KeyChains {
  std::vector<uint32_t> head, next;
  uint64_t mask = 0;

  void build(const std::vector<Vector>& keys, size_t rows) {
    size_t buckets = 16;
    while (buckets < rows * 2) buckets <<= 1;
    mask = buckets - 1;
    head.assign(buckets, kNullRow);
    next.assign(rows, kNullRow);
    for (size_t r = 0; r < rows; ++r) {
      if (has_null_key(keys, r)) continue;
      const uint64_t b = key_hash(keys, r) & mask;
      next[r] = head[b];
      head[b] = static_cast<uint32_t>(r);
    }
  }

  // The first row of `keys` equal to probe row `r` (kNullRow: none).
  uint32_t find(const std::vector<Vector>& keys, const std::vector<Vector>& probe, size_t r) const {
    if (head.empty() || has_null_key(probe, r)) return kNullRow;
    for (uint32_t b = head[key_hash(probe, r) & mask]; b != kNullRow; b = next[b]) {
      if (keys_equal(probe, r, keys, b)) return b;
    }
    return kNullRow;
  }
};

}  // namespace tally::executor
