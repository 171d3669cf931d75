#pragma once
// The device column cache (DESIGN.md section 5): copies of stored chunk
// columns kept in device memory between queries, so that a query over
// resident data reads no host memory and copies nothing. Granularity is one
// column of one chunk, named by its storage identity (tally::ColumnIdentity:
// equal identities mean equal bytes for the life of the process) and the
// width the engine sees it at; LRU eviction, bounded in bytes.
//
// Entries are shared: a running query holds a lease (shared_ptr) on each
// entry it reads, so an entry evicted while in use is freed only when the
// last query that reads it lets go (the bound can be exceeded by what running
// queries hold, never by what sits idle). Thread-safe: sessions query in
// parallel threads. Host-only header: builds without CUDA.
#include <atomic>
#include <cstdint>
#include <memory>

struct CUevent_st;

namespace tally::gpu {

using EventHandle = CUevent_st*;  // cudaEvent_t

struct ColumnKey {
  uint64_t table = 0;
  uint64_t chunk = 0;
  uint32_t column = 0;
  uint8_t width_bytes = 0;  // 4 or 8: the width the engine reads (int2/bool are widened to 4)
  friend bool operator==(const ColumnKey&, const ColumnKey&) = default;
};

// One resident column: `bytes` of device memory holding `rows` values and,
// when the column has NULLs, a one-byte-per-row validity array after them.
// `ready` is recorded on the stream that filled it: readers on another stream
// wait for it (cudaStreamWaitEvent) before reading.
struct DeviceColumn {
  void* data = nullptr;
  uint8_t* validity = nullptr;  // nullptr: no NULLs
  uint64_t bytes = 0;
  EventHandle ready = nullptr;
  // Set once `ready` was seen complete: later look-ups skip the event query
  // (a cudaEventQuery per resident column per chunk, microseconds each, on
  // the host's path to every launch).
  mutable std::atomic<bool> ready_seen{false};
  int device = 0;
  // Set when the memory is a slot of a column region (column_regions.hpp):
  // freed by dropping this rather than by cudaFreeAsync.
  std::shared_ptr<void> backing;
  DeviceColumn() = default;
  DeviceColumn(const DeviceColumn&) = delete;
  DeviceColumn& operator=(const DeviceColumn&) = delete;
  ~DeviceColumn();  // frees the memory (unless backing holds it) and the event
};

struct ColumnCacheStats {
  uint64_t capacity_bytes = 0;
  uint64_t resident_bytes = 0;
  uint64_t entries = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  uint64_t rejected = 0;  // columns larger than the whole cache: streamed, never kept
};

class ColumnCache {
 public:
  // A cache for device `device` holding at most capacity_bytes (0 = cache nothing).
  ColumnCache(int device, uint64_t capacity_bytes);
  ~ColumnCache();
  ColumnCache(const ColumnCache&) = delete;
  ColumnCache& operator=(const ColumnCache&) = delete;

  // The resident column, or nullptr (counted as a hit or a miss).
  std::shared_ptr<const DeviceColumn> find(const ColumnKey& key);
  // Whether the column of one chunk is resident at either width, without
  // counting a hit or a miss or touching the LRU order (the planner's look
  // before it picks an engine).
  bool contains(uint64_t table, uint64_t chunk, uint32_t column) const;
  // Whether a column of `bytes` may be admitted at all.
  bool admits(uint64_t bytes) const { return bytes > 0 && bytes <= capacity_; }
  // Takes ownership of a filled column (its `ready` event recorded) and makes
  // it resident, evicting least recently used entries to stay within the
  // capacity. A concurrent insert of the same key keeps the first.
  void insert(const ColumnKey& key, std::shared_ptr<const DeviceColumn> column);
  // Drops every entry (tests; a DROP/TRUNCATE need not: identities are never reused).
  void clear();

  ColumnCacheStats stats() const;
  uint64_t capacity() const { return capacity_; }
  int device() const { return device_; }

  struct State;

 private:
  int device_;
  uint64_t capacity_;
  std::unique_ptr<State> state_;
};

}  // namespace tally::gpu
