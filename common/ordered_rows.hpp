#pragma once
// The seam between the ordered-set / DISTINCT wrapper run
// (executor/cpu/ordered_values_run.hpp) and an engine that keeps and sorts
// those aggregates' rows where the data is (the GPU engine over its device
// column cache): the wrapper hands over each chunk's rows and receives, at
// the end, every key's codes sorted, so no host work per row precedes the
// result. Rows are (group key, order code of the value: common/ordered_code.hpp).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "common/ordered_code.hpp"
#include "common/ordered_pick.hpp"

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

// The picked values of one collector's rows sorted by (key, code): segment
// i (key keys[i]) holds counts[i] values, of which `per_key` are kept:
// codes[i * per_key + j] is the value at ascending position
// positions[i * per_key + j] of the segment (each pick's positions in the
// order of the picks). When null_key_rows > 0, the NULL-key group's block
// follows the last segment's.
//
// From a collector that counts every row (OrderedRowsCollector::
// count_every_row): every_row[i] is key i's rows, its NULL values included,
// and `keys` holds every key with rows, so a key whose values are all NULL
// has counts[i] = 0 (its block is there, not read); likewise the NULL-key
// group's rows in null_key_every_row, its block there where that is above 0.
struct KeyedPicks {
  std::vector<int64_t> keys;
  std::vector<uint64_t> counts;
  OrderCodes codes;  // moved on to the groups' picks (OrderedValuesRun::Sorted), not copied
  std::vector<uint64_t> positions;
  int per_key = 0;
  uint64_t null_key_rows = 0;
  std::vector<uint64_t> every_row;
  uint64_t null_key_every_row = 0;
};

// The picks out of every segment's sorted codes, on the host.
inline KeyedPicks pick_from_segments(const KeyedSegments& s, const std::vector<OrderedPick>& picks) {
  KeyedPicks out;
  out.keys = s.keys;
  out.counts = s.counts;
  out.null_key_rows = s.null_key_rows;
  out.per_key = ordered_picks_per_group(picks);
  const size_t blocks = s.keys.size() + (s.null_key_rows > 0 ? 1 : 0);
  out.codes.reserve(blocks * static_cast<size_t>(out.per_key));
  out.positions.reserve(out.codes.capacity());
  uint64_t begin = 0;
  for (size_t b = 0; b < blocks; ++b) {
    const uint64_t n = b < s.keys.size() ? s.counts[b] : s.null_key_rows;
    for (const OrderedPick& p : picks) {
      uint64_t at[2];
      const int count = ordered_pick_positions(p, n, at);
      for (int i = 0; i < count; ++i) {
        out.positions.push_back(at[i]);
        out.codes.push_back(s.codes[begin + at[i]]);
      }
    }
    begin += n;
  }
  return out;
}

// count(DISTINCT)'s answer per key, counted where the rows were sorted:
// keys[i] has distinct[i] distinct values (same_order_value's equality)
// among its rows; the NULL-key group, when null_key_rows > 0, has
// null_key_distinct. `values`: the rows counted.
struct KeyedDistinct {
  std::vector<int64_t> keys;
  std::vector<uint64_t> distinct;
  uint64_t values = 0;
  uint64_t null_key_rows = 0;
  uint64_t null_key_distinct = 0;
};

// The distinct values of each segment of sorted codes, on the host.
inline KeyedDistinct distinct_in_segments(const KeyedSegments& s, bool floats) {
  KeyedDistinct out;
  out.keys = s.keys;
  out.distinct.resize(s.keys.size());
  out.null_key_rows = s.null_key_rows;
  out.values = s.codes.size();
  uint64_t begin = 0;
  const auto distinct_of = [&](uint64_t n) {
    uint64_t d = 0;
    for (uint64_t i = 0; i < n; ++i) d += i == 0 || !same_order_value(s.codes[begin + i], s.codes[begin + i - 1], floats);
    begin += n;
    return d;
  };
  for (size_t i = 0; i < s.keys.size(); ++i) out.distinct[i] = distinct_of(s.counts[i]);
  out.null_key_distinct = distinct_of(s.null_key_rows);
  return out;
}

// Calls f(code_of), code_of(r) being the order code of row r of `in`
// (any width the engines take), so that a loop over the rows is compiled
// once per width.
template <class F>
void with_order_codes(const ColumnView& in, F&& f) {
  switch (in.width) {
    case ColumnWidth::int32: {
      const auto* v = static_cast<const int32_t*>(in.data);
      f([v](size_t r) { return order_code_of_int(v[r]); });
      break;
    }
    case ColumnWidth::int64: {
      const auto* v = static_cast<const int64_t*>(in.data);
      f([v](size_t r) { return order_code_of_int(v[r]); });
      break;
    }
    case ColumnWidth::float32: {
      const auto* v = static_cast<const float*>(in.data);
      f([v](size_t r) { return order_code_of_float(v[r]); });
      break;
    }
    case ColumnWidth::float64: {
      const auto* v = static_cast<const double*>(in.data);
      f([v](size_t r) { return order_code_of_float(v[r]); });
      break;
    }
  }
}

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
  // Told before the first chunk, for each slot whose aggregates read only
  // `picks` (the slot is then asked for picked(slot, picks), never sorted):
  // an engine may keep only what the picks read, e.g. a top-n per partition
  // (each pick an nth of a few first ranks) needs each key's row count and
  // its few best codes, not every row.
  virtual void plan_picks(size_t /*slot*/, const std::vector<OrderedPick>& /*picks*/) {}
  // Asked before the first chunk, after plan_picks: whether the collector
  // will also count, per key, the rows whose value is NULL
  // (KeyedPicks::every_row), so that its keys are every group's. false: it
  // keeps the rows with values only.
  virtual bool count_every_row() { return false; }
  // Collector `slot`'s rows, sorted; called once per slot, after the last chunk.
  virtual KeyedSegments sorted(size_t slot) = 0;
  // Instead of sorted(slot), when the slot's aggregates read only `picks`
  // (percentiles; not mode or count(DISTINCT)): only those values of each
  // key's sorted codes. An engine that sorts where the data is overrides it
  // to pick there and copy back only the picks.
  virtual KeyedPicks picked(size_t slot, const std::vector<OrderedPick>& picks) {
    return pick_from_segments(sorted(slot), picks);
  }
  // Instead of sorted(slot), when the slot's aggregates are all
  // count(DISTINCT) of values that are floats or not: each key's number of
  // distinct codes. An engine that sorts where the data is overrides it to
  // count there and copy back one number per key, not every value.
  virtual KeyedDistinct distinct_counts(size_t slot, bool floats) { return distinct_in_segments(sorted(slot), floats); }
  // Where the rows were kept and sorted, for EXPLAIN ANALYZE.
  virtual std::string name() const = 0;
};

}  // namespace tally
