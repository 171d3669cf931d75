#pragma once
// OrderedValuesRun's index of its inner run's groups by key.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "executor/cpu/key_table.hpp"

namespace tally::executor::cpu {

// The result groups of the inner run by key: ids are result positions.
class GroupIndex {
 public:
  // Keys over a range at most this many times the groups (plus a margin)
  // index a plain array: a million groups' table took tens of milliseconds
  // to build on one thread, the array a millisecond.
  static constexpr uint64_t kDenseSpanPerGroup = 4;
  // Fewer groups are indexed by one thread.
  static constexpr size_t kParallelGroups = size_t{1} << 15;

  // The dense array is made on `threads` (a million groups' 4 MB of fresh
  // pages and their scattered writes took 7.6 ms on one thread of the GPU host).
  GroupIndex(const AggregationResult& r, int threads);
  uint32_t find(int64_t key) const {
    if (dense_.empty()) return table_.find(key);
    const uint64_t at = static_cast<uint64_t>(key) - static_cast<uint64_t>(base_);
    return at < dense_.size() ? dense_[at] : KeyTable::kNotFound;
  }
  uint32_t null_group() const { return null_group_; }

 private:
  int64_t base_ = 0;
  std::vector<uint32_t> dense_;  // key - base_ -> group; empty: table_
  KeyTable table_;
  uint32_t null_group_ = KeyTable::kNotFound;
};

}  // namespace tally::executor::cpu
