#pragma once
// The pieces of a CPU aggregation run's state that its variants share: the
// variant names, a worker's or a partition's state table, and the buffers
// that hold a chunk's rows in radix-partition order.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "executor/cpu/key_table.hpp"
#include "executor/cpu/state_set.hpp"

namespace tally::executor::cpu {

enum class Variant { dense, hash, dense_radix, hash_radix };

inline const char* variant_name(Variant v) {
  switch (v) {
    case Variant::dense: return "dense";
    case Variant::hash: return "hash-partitioned";
    case Variant::dense_radix: return "dense-radix";
    case Variant::hash_radix: return "hash-radix";
  }
  return "?";
}

// One worker's local aggregation state (thread-local variants).
struct LocalTable {
  KeyTable table;
  StateSet states;
  int64_t null_group = -1;  // group id of the NULL key
  std::vector<uint8_t> dense_seen;
};

// One hash-radix partition's state (dense-radix partitions are slices of one
// direct-indexed array and need none).
struct Partition {
  KeyTable table{0};
  StateSet states;
  std::vector<uint8_t> seen;  // the NULL-key partition: whether it got a row
};

// One column (or validity/FILTER mask) to move into partition order.
struct MoveJob {
  const void* from;
  void* to;
  int width;
};

// Every row's slot is written before it is read: a buffer that is not
// zeroed when it grows (a kept chunk takes it, so each chunk of a
// deferred run gets a fresh one: 4 MB zeroed per chunk on one thread).
class SlotBuffer {
 public:
  uint32_t* data() { return data_.get(); }
  const uint32_t* data() const { return data_.get(); }
  uint32_t& operator[](size_t i) { return data_[i]; }
  void resize(size_t n) {
    if (n > capacity_) {
      data_ = std::make_unique_for_overwrite<uint32_t[]>(n);
      capacity_ = n;
    }
  }

 private:
  std::unique_ptr<uint32_t[]> data_;
  size_t capacity_ = 0;
};

// A buffer for one moved column; every byte is written before it is read.
struct MoveBuffer {
  std::unique_ptr<uint64_t[]> data;
  size_t words = 0;
};

// Deferred dense-radix: one chunk's partitioned rows, kept until finalize.
struct DeferredChunk {
  std::vector<uint32_t> start;  // partition p's rows: [start[p], start[p + 1])
  SlotBuffer slots;             // each row's slot (range_ for the NULL key), partition order
  ChunkInput moved;             // the columns in partition order (views into buffers)
  std::vector<MoveBuffer> buffers;
};

}  // namespace tally::executor::cpu
