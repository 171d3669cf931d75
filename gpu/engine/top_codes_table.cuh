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
#include <cuda_runtime.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "common/ordered_rows.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/engine/ordered_row_codes.cuh"

namespace tally::gpu {

inline constexpr int kMaxTopCodes = 8;

struct TopCodesShape {
  int k = 0;             // ranks kept per key
  bool largest = false;  // the picks count from the end: the k largest codes
};

// The shape a table needs for `picks`, or nullopt when a pick is not an nth
// of the first kMaxTopCodes ranks or the picks count from both ends.
std::optional<TopCodesShape> top_codes_shape(const std::vector<tally::OrderedPick>& picks);

// The table as the kernels see it: capacity + 2 entries of 2 + k words
// each, one after the other (a row's probe, count and ranks in one or two
// 32-byte sectors): word 0 the sort key (kFreeKey: a free slot), word 1 the
// count (its low 32 bits), then the k ranks, best first. Entry `capacity`
// is the NULL key's, `capacity + 1` the key equal to kFreeKey's.
struct TopCodesView {
  uint64_t* entries = nullptr;
  uint64_t capacity = 0;  // a power of two
  int k = 0;
  int largest = 0;
};

class TopCodesTable {
 public:
  // `expected_keys` sizes the table (0 = unknown); `max_keys` bounds it.
  TopCodesTable(TopCodesShape shape, uint64_t expected_keys, uint64_t max_keys, cudaStream_t stream);

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

 private:
  void allocate(uint64_t capacity, cudaStream_t stream);

  TopCodesShape shape_;
  DeviceBuffer entries_;
  TopCodesView view_;
  int rebuilds_ = 0;
};

}  // namespace tally::gpu
