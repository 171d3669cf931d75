#pragma once
// Hash chains over the rows of key vectors: the lookup structure of a join's
// build side, an IN list and a decorrelated subquery's groups. Two arrays of
// row numbers (a bucket's first row, each row's next), 4 bytes per bucket
// and per row. Rows with a NULL key are left out (a NULL key equals nothing).
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "common/ordered_rows.hpp"
#include "executor/operators/chunk_ops.hpp"

namespace tally::executor {

// The key columns of a held side and a probe side when every one is
// integer-like on both sides: compared as the int64s they are held as,
// without keys_equal's per-row, per-column type dispatch (composite keys
// such as TPC-H's (partkey, suppkey) included). Empty otherwise.
struct IntegerKeys {
  std::vector<const int64_t*> held, probe;
  IntegerKeys(const std::vector<Vector>& held_keys, const std::vector<Vector>& probe_keys) {
    if (held_keys.empty() || held_keys.size() != probe_keys.size()) return;
    for (size_t i = 0; i < held_keys.size(); ++i) {
      const Physical p = physical_of(held_keys[i].type.id);
      if ((p != Physical::integer && p != Physical::boolean) || physical_of(probe_keys[i].type.id) != p) {
        held.clear();
        probe.clear();
        return;
      }
      held.push_back(held_keys[i].int_data());
      probe.push_back(probe_keys[i].int_data());
    }
  }
  bool usable() const { return !held.empty(); }
  void prefetch(uint32_t b) const {
    for (const int64_t* h : held) __builtin_prefetch(&h[b]);
  }
  bool equal(size_t r, uint32_t b) const {
    for (size_t i = 0; i < held.size(); ++i) {
      if (probe[i][r] != held[i][b]) return false;
    }
    return true;
  }
};

// Elements start unset when the vector grows by resize(): the chains of a
// build side of millions of rows fill their arrays on every thread, instead
// of one thread zeroing hundreds of megabytes first.
using RowNumbers = std::vector<uint32_t, UninitializedAllocator<uint32_t>>;

// How many rows a key test's lookups in the chains have looked at and how
// many they kept, over all the threads of a scan (KeyChains::candidate_rows).
struct ChainCheck {
  static constexpr uint64_t kSampleRows = uint64_t{1} << 16;
  std::atomic<uint64_t> looked{0}, kept{0};
  ChainCheck() = default;
  ChainCheck(const ChainCheck&) {}  // a copy counts afresh
  ChainCheck& operator=(const ChainCheck&) { return *this; }
  bool worthwhile() const {
    const uint64_t n = looked.load(std::memory_order_relaxed);
    return n < kSampleRows || (n - kept.load(std::memory_order_relaxed)) * 16 >= n;
  }
  void count(uint64_t rows_looked, uint64_t rows_kept) {
    looked.fetch_add(rows_looked, std::memory_order_relaxed);
    kept.fetch_add(rows_kept, std::memory_order_relaxed);
  }
};

struct KeyChains {
  RowNumbers head, next;
  uint64_t mask = 0;
  // One integer-like key over a span of values not much wider than the rows
  // (ids, dates): a bit per value of [bits_min, bits_min + bits_span),
  // set where some row holds it, and one zero word past the span. The exact
  // membership test of matching_rows, a shift and a load per probe row
  // instead of a hash and a chain walk whose branch fails on most rows.
  // A few rows over a wider span (632 orders among 60M order numbers) get
  // a bit per 2^bits_shift values instead: a clear bit rules a probe row
  // out, a set one is looked up in the chains.
  std::vector<uint64_t> bits;
  int64_t bits_min = 0;
  uint64_t bits_span = 0;  // in bits, after the shift
  uint32_t bits_shift = 0;
  // A composite key of integer-like columns: an exact bitmap of each key
  // column whose held values fill at most half of their span, tested before
  // the hash. The lineitem rows of TPC-H Q9's green parts hold 5% of the
  // part numbers: partsupp's (partkey, suppkey) rows are ruled out by a load
  // each instead of a hash and a chain walk through millions of held rows.
  struct ColumnBits {
    size_t column = 0;
    std::vector<uint64_t> words;  // one zero word past the span, as `bits`
    int64_t min = 0;
    uint64_t span = 0;
  };
  std::vector<ColumnBits> column_bits;
  mutable ChainCheck chain_check;  // candidate_rows' lookups so far

  // `hashes`: key_hash of each row when the caller computed them (in parallel).
  void build(const std::vector<Vector>& keys, size_t rows, const uint64_t* hashes = nullptr) {
    size_t buckets = 16;
    while (buckets < rows * 2) buckets <<= 1;
    mask = buckets - 1;
    head.assign(buckets, kNullRow);
    next.assign(rows, kNullRow);
    for (size_t r = 0; r < rows; ++r) {
      if (has_null_key(keys, r)) continue;
      const uint64_t b = (hashes ? hashes[r] : key_hash(keys, r)) & mask;
      next[r] = head[b];
      head[b] = static_cast<uint32_t>(r);
    }
    build_bits(keys, rows);
  }

  // The bitmap of a single integer-like key whose span allows it (see bits),
  // or the column bitmaps of a composite one (column_bits), made on
  // `threads` threads.
  void build_bits(const std::vector<Vector>& keys, size_t rows, int threads = 1);
  // The exact bitmap of one integer-like key column over its whole span
  // (a bit per value from `min`, `span` bits), where a test can hold more
  // than the host's caches favour (the GPU's scan selection, whose device
  // copy replaces a bucketed `bits`). False where the key is not one
  // integer-like column, holds only NULLs, or spans more than `max_span`.
  static bool exact_bits(const std::vector<Vector>& keys, size_t rows, uint64_t max_span, int threads, int64_t& min,
                         uint64_t& span, std::vector<uint64_t>& words);
  // Bytes of the bitmaps.
  size_t bits_bytes() const {
    size_t words = bits.size();
    for (const ColumnBits& c : column_bits) words += c.words.size();
    return words * sizeof(uint64_t);
  }

  // The same chains as build() (each bucket's rows linked in the same
  // order), made on `threads` threads from each row's key_hash: the rows
  // are first split by bucket range, then each range's buckets are linked
  // by one thread in row order. A build side of millions of rows would
  // otherwise be linked by one thread while the others wait.
  void build_parallel(const std::vector<Vector>& keys, size_t rows, const uint64_t* hashes, int threads);
  // build_parallel over the keys' hashes, computed first on `threads` threads.
  void build_hashed(const std::vector<Vector>& keys, size_t rows, int threads);

  // The first row of the chain a hash falls in (kNullRow: empty).
  uint32_t first(uint64_t hash) const { return head.empty() ? kNullRow : head[hash & mask]; }
  // Fetches ahead the bucket a hash falls in, and a row's link.
  void prefetch_bucket(uint64_t hash) const {
    if (!head.empty()) __builtin_prefetch(&head[hash & mask]);
  }
  void prefetch_row(uint32_t row) const { __builtin_prefetch(&next[row]); }

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
  // row is tested. Integer-like keys are compared as int64s (IntegerKeys).
  void matching_rows(const std::vector<Vector>& keys, const std::vector<Vector>& probe, size_t rows,
                     std::vector<uint32_t>& keep) const {
    select_rows(keys, probe, rows, keep, true);
  }

  // A join's key test, which the join's probe checks again: the rows
  // matching_rows keeps, and perhaps others. Where the bitmaps leave rows
  // to look up in the chains, the lookups continue only while they rule out
  // a sixteenth of the rows they look up or more: the lineitem rows of TPC-H
  // Q9's green parts all match partsupp's (partkey, suppkey), so each lookup
  // only repeats the probe that follows it.
  void candidate_rows(const std::vector<Vector>& keys, const std::vector<Vector>& probe, size_t rows,
                      std::vector<uint32_t>& keep) const {
    select_rows(keys, probe, rows, keep, chain_check.worthwhile());
  }

  // Keeps of keep[from, end) (a shifted bitmap's candidates) the rows with
  // an equal row in the chains.
  void keep_chained(const std::vector<Vector>& keys, const std::vector<Vector>& probe, std::vector<uint32_t>& keep,
                    size_t from) const;

  // Appends the probe rows [0, rows) whose every column_bits column has its
  // bit set (a NULL has none), branch-free; false, with nothing appended,
  // where there are no column bitmaps or a probe column is not integer-like.
  bool matching_rows_by_column_bits(const std::vector<Vector>& probe, size_t rows, std::vector<uint32_t>& keep) const;

  // matching_rows over the bitmap: branch-free, a row kept by advancing the
  // output by its bit.
  void matching_rows_by_bits(const Vector& probe, size_t rows, std::vector<uint32_t>& keep) const {
    const int64_t* v = probe.int_data();
    const uint8_t* null = probe.nulls.empty() ? nullptr : probe.nulls.data();
    size_t n = keep.size();
    keep.resize(n + rows);
    uint32_t* out = keep.data();
    const uint64_t* b = bits.data();
    for (size_t r = 0; r < rows; ++r) {
      uint64_t at = (static_cast<uint64_t>(v[r]) - static_cast<uint64_t>(bits_min)) >> bits_shift;
      at = at < bits_span ? at : bits_span;  // past the span: the zero word's bit
      uint64_t in = (b[at >> 6] >> (at & 63)) & 1;
      if (null) in &= static_cast<uint64_t>(null[r] == 0);
      out[n] = static_cast<uint32_t>(r);
      n += in;
    }
    keep.resize(n);
  }

 private:
  // matching_rows, or, without `look_up`, the rows the bitmaps keep (every
  // row where there are none), not looked up in the chains.
  void select_rows(const std::vector<Vector>& keys, const std::vector<Vector>& probe, size_t rows,
                   std::vector<uint32_t>& keep, bool look_up) const;
};

}  // namespace tally::executor
