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

  // Appends to `keep` the probe rows [0, rows) that have an equal row in
  // `keys`, in order. A build side larger than the caches makes each lookup
  // three dependent random reads (bucket, then the row's key and next link):
  // the hashes are computed first, then the bucket of a row further ahead is
  // fetched, and the key and link of a nearer one's first row, while this
  // row is tested. One integer-like key is compared as the int64 it is.
  void matching_rows(const std::vector<Vector>& keys, const std::vector<Vector>& probe, size_t rows,
                     std::vector<uint32_t>& keep) const {
    if (head.empty() || rows == 0) return;
    constexpr size_t kAhead = 32;
    std::vector<uint64_t> hashes(rows);
    key_hashes(probe, 0, rows, hashes.data());
    const bool int_key = keys.size() == 1 && (physical_of(keys[0].type.id) == Physical::integer ||
                                              physical_of(keys[0].type.id) == Physical::boolean) &&
                         physical_of(probe[0].type.id) == physical_of(keys[0].type.id);
    const int64_t* build_ints = int_key ? keys[0].int_data() : nullptr;
    const int64_t* probe_ints = int_key ? probe[0].int_data() : nullptr;
    for (size_t r = 0; r < rows; ++r) {
      if (r + kAhead < rows) __builtin_prefetch(&head[hashes[r + kAhead] & mask]);
      if (r + kAhead / 2 < rows) {
        const uint32_t near = head[hashes[r + kAhead / 2] & mask];
        if (near != kNullRow) {
          __builtin_prefetch(&next[near]);
          if (int_key) __builtin_prefetch(&build_ints[near]);
        }
      }
      if (has_null_key(probe, r)) continue;
      for (uint32_t b = head[hashes[r] & mask]; b != kNullRow; b = next[b]) {
        if (int_key ? probe_ints[r] == build_ints[b] : keys_equal(probe, r, keys, b)) {
          keep.push_back(static_cast<uint32_t>(r));
          break;
        }
      }
    }
  }
};

}  // namespace tally::executor
