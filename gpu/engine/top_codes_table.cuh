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
// count (its low 32 bits), then the k ranks, best first. Entry `capacity`
// is the NULL key's, `capacity + 1` the key equal to kFreeKey's.
struct TopCodesView {
  uint64_t* entries = nullptr;
  uint64_t capacity = 0;  // hashed: a power of two; direct: the keys' range
  uint64_t base = 0;      // direct: the sort key of entry 0
  int k = 0;
  int largest = 0;
  int direct = 0;  // entry i holds sort key base + i (no probing)
};

class TopCodesTable {
 public:
  // `expected_keys` sizes the table (0 = unknown); `max_keys` bounds it.
  // `keys`: the range every sort key is expected in, where statistics know
  // it: the table is direct when the range is no wider than a hashed one.
  TopCodesTable(TopCodesShape shape, uint64_t expected_keys, uint64_t max_keys, cudaStream_t stream,
                std::optional<SortKeyRange> keys = std::nullopt);

  // Enqueues the chunk's kept rows (CollectArgs: keys, values, FILTER);
  // rows whose key finds no slot go to a.out_keys/out_codes at a.count.
  void add(const CollectArgs& a, int64_t rows, cudaStream_t stream);

  // The picks of every key: keys decoded by `key_kind`, the NULL key's block
  // last. `overflow` rows of (keys, codes) were left by add(); they are
  // merged first. Waits for `stream`.
  tally::KeyedPicks picked(const std::vector<tally::OrderedPick>& picks, const uint64_t* overflow_keys,
                           const uint64_t* overflow_codes, uint64_t overflow, int key_kind, cudaStream_t stream);

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
