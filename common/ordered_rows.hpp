#pragma once
// The seam between the ordered-set / DISTINCT wrapper run
// (executor/cpu/ordered_values_run.hpp) and an engine that keeps and sorts
// those aggregates' rows where the data is (the GPU engine over its device
// column cache): the wrapper hands over each chunk's rows and receives, at
// the end, every key's codes sorted, so no host work per row precedes the
// result. Rows are (group key, order code of the value: common/ordered_code.hpp).
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "common/aggregate_engine.hpp"

namespace tally {

// An allocator whose vectors leave new elements uninitialized: a buffer of
// 10^8 codes about to be overwritten (by a copy from the device, a scatter)
// is not zeroed first, a single-threaded pass over 800 MB.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using OrderCodes = std::vector<uint64_t, UninitializedAllocator<uint64_t>>;

// One collector's rows sorted by (key, code): segment i holds the codes of
// key keys[i], counts[i] of them, one after the other in `codes`; the rows
// of the NULL-key group follow the last segment (null_key_rows of them,
// sorted too).
struct KeyedSegments {
  std::vector<int64_t> keys;
  std::vector<uint64_t> counts;
  OrderCodes codes;
  uint64_t null_key_rows = 0;
};

// What one collector keeps of a chunk: the rows whose value input `input`
// is not NULL and that pass `filter` (nullptr = all).
struct OrderedRowsSlot {
  int input = -1;
  const uint8_t* filter = nullptr;
};

class OrderedRowsCollector {
 public:
  virtual ~OrderedRowsCollector() = default;
  // As AggregationRun::hold: whether this collector keeps its own copy of
  // the column (then the caller passes it without data).
  virtual bool hold(const ColumnIdentity& column, ColumnWidth width) = 0;
  // Keeps the chunk's rows for every slot (slot i is collector i; the same
  // slots, in the same order, every chunk). Keys: chunk.keys, or
  // chunk.key_columns packed with the spec's key_parts.
  virtual void collect(const ChunkInput& chunk, const std::vector<OrderedRowsSlot>& slots) = 0;
  // Collector `slot`'s rows, sorted; called once per slot, after the last chunk.
  virtual KeyedSegments sorted(size_t slot) = 0;
  // Where the rows were kept and sorted, for EXPLAIN ANALYZE.
  virtual std::string name() const = 0;
};

}  // namespace tally
