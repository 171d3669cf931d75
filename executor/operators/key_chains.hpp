#pragma once
// Hash chains over the rows of key vectors: the lookup structure of a join's
// build side, an IN list and a decorrelated subquery's groups. Two arrays of
// row numbers (a bucket's first row, each row's next), 4 bytes per bucket
// and per row. Rows with a NULL key are left out (a NULL key equals nothing).
#include <cstdint>
#include <vector>

#include "executor/operators/chunk_ops.hpp"

namespace tally::executor {

struct KeyChains {
  std::vector<uint32_t> head, next;
  uint64_t mask = 0;

  // `hashes`: key_hash of each row when the caller computed them (in parallel).
  void build(const std::vector<Vector>& keys, size_t rows, const std::vector<uint64_t>* hashes = nullptr) {
    size_t buckets = 16;
    while (buckets < rows * 2) buckets <<= 1;
    mask = buckets - 1;
    head.assign(buckets, kNullRow);
    next.assign(rows, kNullRow);
    for (size_t r = 0; r < rows; ++r) {
      if (has_null_key(keys, r)) continue;
      const uint64_t b = (hashes ? (*hashes)[r] : key_hash(keys, r)) & mask;
      next[r] = head[b];
      head[b] = static_cast<uint32_t>(r);
    }
  }

  // The first row of the chain a hash falls in (kNullRow: empty).
  uint32_t first(uint64_t hash) const { return head.empty() ? kNullRow : head[hash & mask]; }

  // The first row of `keys` equal to probe row `r` (kNullRow: none).
  uint32_t find(const std::vector<Vector>& keys, const std::vector<Vector>& probe, size_t r) const {
    if (has_null_key(probe, r)) return kNullRow;
    for (uint32_t b = first(key_hash(probe, r)); b != kNullRow; b = next[b]) {
      if (keys_equal(probe, r, keys, b)) return b;
    }
    return kNullRow;
  }
};

}  // namespace tally::executor
