#pragma once
// Reads stored chunks ahead of the scan that consumes them, on the shared
// worker pool: a table's first scan is bound by reading and decoding its
// chunk files, which the scanning thread alone would do one chunk at a time
// while the engine waits. Reads are queued in chunk order and taken in that
// order. A read no worker has started when the scan takes it runs on the
// scanning thread, so a busy pool only makes the scan read for itself.
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>

#include "storage/column_vector.hpp"

namespace tally::executor {

class ChunkReadAhead {
 public:
  using Batch = std::shared_ptr<const storage::ChunkBatch>;
  using Read = std::function<Batch()>;

  // At most `depth` reads queued ahead of the one taken (0: each read runs
  // in take()); bounds the decoded chunks held beyond the scan's own.
  explicit ChunkReadAhead(size_t depth);
  // Waits for reads a worker is running (they use the caller's snapshot);
  // queued ones never start.
  ~ChunkReadAhead();
  ChunkReadAhead(const ChunkReadAhead&) = delete;
  ChunkReadAhead& operator=(const ChunkReadAhead&) = delete;

  // Read-ahead depth for a scan on this host: the pool's workers, at most 8.
  static size_t default_depth();

  size_t depth() const { return depth_; }
  // Reads queued and not yet taken.
  size_t queued() const { return slots_.size(); }
  void push(Read read);
  // The oldest queued read's batch (its error rethrown here).
  Batch take();

 private:
  struct Slot;
  static void run(Slot& slot);
  size_t depth_;
  std::deque<std::shared_ptr<Slot>> slots_;
};

}  // namespace tally::executor
