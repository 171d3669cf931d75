#pragma once
// A top-n per partition's picks without a sort. When every pick of an
// ordered slot is an nth of one of the k first ranks (k <= kMaxTopCodes,
// all counted from the same end: `row_number() OVER (PARTITION BY p ORDER
// BY o DESC) <= k` as an aggregation, executor/top_n_groups.hpp), each key
// needs only its row count and its k best codes. This table keeps exactly
// those, in device memory, per key: each row claims its key's slot (open
// addressing, linear probing; an entry's key, count and ranks side by side),
// adds one to the count and offers its code to the k ranks. The ranks are k atomic max (min) registers in a cascade: the
// code a rank's atomicMax displaces, or the offered code when it does not
// get in, goes on to the next rank, so rank i ends with the (i+1)-th best of
// every code offered, duplicates counted, whatever the order of the rows.
// A code no better than the last rank's current one changes nothing and is
// not offered (registers only improve, so a stale read errs on the safe
// side). Where the sort moved each row through several radix passes, a row
// here costs a probe and one or two atomics in L2.
//
// A key that finds no free slot within kMaxProbes (the estimate of the keys
// was far too low) is appended as a (key, code) row to the caller's
// overflow buffers; at the end the table is rebuilt at twice the keys and
// both are merged into it, so no row is lost.
//
// Where the statistics bound the sort keys to a range no wider than the
// hashed table would be, the table is direct: entry i is the key base + i,
// set when the table is made, so a row costs no probe and a million keys'
// entries take half the memory (they then stay in L2). A key outside the
// range (statistics that missed it) goes to the overflow rows like a key
// that found no slot.
//
// A table told to count every row (count_every_row: the groups of a top-n
// are then its keys, and no aggregation runs beside it) also counts, per
// key, the rows whose value is NULL: an entry's count word holds the
// values in its low 32 bits and every row in its high 32, so that one
// atomic adds both. Such a row whose key finds no slot leaves its key alone
// in the caller's bare-key buffer.
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "common/ordered_rows.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/ordered_row_codes.cuh"

namespace tally::gpu {

// Sort keys (ordered_row_codes.cuh) from `low` to `high`, both included.
struct SortKeyRange {
  uint64_t low = 0;
  uint64_t high = 0;
};

// The table as the kernels see it: capacity + 2 entries of 2 + k words
// each, one after the other (a row's probe, count and ranks in one or two
// 32-byte sectors): word 0 the sort key (kFreeKey: a free slot), word 1 the
// count word (the values in its low 32 bits; every row in its high 32 where
// counted), then the k ranks, best first. Entry `capacity` is the NULL
// key's, `capacity + 1` the key equal to kFreeKey's.
struct TopCodesView {
  uint64_t* entries = nullptr;
  uint64_t capacity = 0;  // hashed: a power of two; direct: the keys' range
  uint64_t base = 0;      // direct: the sort key of entry 0
  int k = 0;
  int largest = 0;
  int direct = 0;  // entry i holds sort key base + i (no probing)
  int every_row = 0;  // rows without a value are counted too (count word's high half)
};

// The rows add() could not place, in the caller's buffers: `rows` (key,
// code) pairs, and `bare_rows` keys of rows without a value (a table that
// counts every row).
struct TopCodesOverflow {
  const uint64_t* keys = nullptr;
  const uint64_t* codes = nullptr;
  uint64_t rows = 0;
  const uint64_t* bare_keys = nullptr;
  uint64_t bare_rows = 0;
};

class TopCodesTable {
 public:
  // `expected_keys` sizes the table (0 = unknown); `max_keys` bounds it.
  // `keys`: the range every sort key is expected in, where statistics know
  // it: the table is direct when the range is no wider than a hashed one.
  TopCodesTable(TopCodesShape shape, uint64_t expected_keys, uint64_t max_keys, cudaStream_t stream,
                std::optional<SortKeyRange> keys = std::nullopt);

  // From now on, rows without a value are counted too, and picked() fills
  // KeyedPicks::every_row (common/ordered_rows.hpp). Before the first add().
  void count_every_row() { view_.every_row = 1; }

  // Enqueues the chunk's kept rows (CollectArgs: keys, values, FILTER);
  // rows whose key finds no slot go to a.out_keys/out_codes at a.count,
  // and where every row is counted, those without a value to
  // a.out_bare_keys at a.bare_count.
  void add(const CollectArgs& a, int64_t rows, cudaStream_t stream);

  // The picks of every key: keys decoded by `key_kind`, the NULL key's block
  // last. The rows add() left in `overflow` are merged first. Waits for `stream`.
  tally::KeyedPicks picked(const std::vector<tally::OrderedPick>& picks, const TopCodesOverflow& overflow, int key_kind,
                           cudaStream_t stream);

  TopCodesShape shape() const { return shape_; }
  // Times the table was rebuilt for overflowing keys (EXPLAIN ANALYZE).
  int rebuilds() const { return rebuilds_; }
  // Whether the table was made direct (EXPLAIN ANALYZE, tests).
  bool made_direct() const { return made_direct_; }

 private:
  // A hashed table of `capacity` slots, or with `direct_base` a direct one
  // of `capacity` keys from that sort key.
  void allocate(uint64_t capacity, cudaStream_t stream, std::optional<uint64_t> direct_base = std::nullopt);

  TopCodesShape shape_;
  DeviceBuffer entries_;
  TopCodesView view_;
  int rebuilds_ = 0;
  bool made_direct_ = false;
};

}  // namespace tally::gpu
