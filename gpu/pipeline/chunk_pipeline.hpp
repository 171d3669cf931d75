#pragma once
// Brings one query's chunks to the device and times their aggregation
// (DESIGN.md section 5). Stored columns come from the device column cache
// when resident; the others are copied through pinned host staging buffers
// on a copy stream while the previous chunk aggregates on the compute stream
// (two slots: the copy of chunk i+1 overlaps the kernels of chunk i), and
// stored columns the cache admits stay resident for later queries.
//
// Protocol, driven by GpuRun (gpu/engine/gpu_run.cpp): stage(chunk i),
// then run(chunk i-1), ... A staged chunk's device pointers stay valid until
// its run has finished on the device; at most two chunks are staged at a
// time. run() does not wait for the device: each chunk's aggregation is timed
// by a pair of CUDA events read later (completed()), so the host enqueues the
// next chunk while the GPU runs this one and the events time kernels, not
// host gaps.
// One pipeline serves one query at a time; the engine pools them so that
// streams, events and pinned buffers are reused across queries.
// Host-only header: builds without CUDA (gpu_stub.cpp throws).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "gpu/pipeline/column_cache.hpp"
#include "gpu/group_by.hpp"

namespace tally::gpu {

// One column of a chunk as the host has it.
struct HostColumn {
  const void* data = nullptr;
  const uint8_t* validity = nullptr;  // nullptr: no NULLs
  uint32_t width_bytes = 4;
  bool cacheable = false;  // key names stored bytes (a known ColumnIdentity)
  ColumnKey key;
  // The column's resident copy when the run already holds it (leased before
  // the host skipped reading it): data and validity are then null.
  std::shared_ptr<const DeviceColumn> resident;
};

struct StagedChunk {
  int64_t rows = 0;
  std::vector<ColumnPointer> columns;  // device pointers, in stage()'s order
  std::vector<uint32_t> widths;        // bytes per value of each column
  std::vector<std::shared_ptr<const DeviceColumn>> leases;  // cache entries read
  std::vector<EventHandle> waits;      // events the compute stream waits for
  int slot = -1;                       // staging slot of transient copies (-1: none)
  uint64_t copied_bytes = 0;
  int hits = 0, misses = 0;
};

// The device time of one run(), once its events have completed.
struct ChunkTiming {
  uint64_t ticket = 0;  // run()'s return value
  double ms = 0;
};

struct PipelineStats {
  uint64_t hits = 0, misses = 0;     // column look-ups in the cache
  uint64_t copied_bytes = 0;         // host to device
  // Host time inside stage(): waiting for a staging slot's previous copy,
  // copying columns into it, and the device-side set-up of the copies
  // (allocation, placement, the copy and event calls).
  double slot_wait_us = 0, host_copy_us = 0, copy_setup_us = 0;
  double device_ms = 0;              // CUDA-event time of run() bodies
  uint64_t chunks = 0;
  // CUDA-event time from the first run()'s start to the latest completed
  // run()'s end: span_ms - device_ms is the time the GPU sat between chunks
  // (waiting for the host to enqueue), measured on the device.
  double span_ms = 0;
};

class ChunkPipeline {
 public:
  // Runs outstanding before run() waits for the oldest: enough that the
  // host, which spends tens of microseconds enqueueing a chunk, stays ahead
  // of the GPU; few enough to bound the leases and staging slots held.
  static constexpr size_t kMaxInFlight = 8;
  ChunkPipeline(int device, ColumnCache* cache);  // cache may be null: everything is transient
  ~ChunkPipeline();
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // The stream GroupByAggregator launches on.
  StreamHandle compute_stream() const;
  // Makes the chunk's columns available on the device; copies start on the
  // copy stream and are not waited for here.
  StagedChunk stage(int64_t rows, const std::vector<HostColumn>& columns);
  // Enqueues `body` (the chunk's aggregation on compute_stream()) after the
  // chunk's copies, between two CUDA events, and returns a ticket at once.
  // The chunk's cache leases and staging slot are held until its events
  // complete. At most kMaxInFlight runs are outstanding: a further run()
  // first waits for the oldest (the GPU still has the others queued).
  uint64_t run(StagedChunk& chunk, const std::function<void()>& body);
  // Timings of finished runs, oldest first; wait = true waits for all of them.
  std::vector<ChunkTiming> completed(bool wait);
  // Waits for the runs up to `ticket` (not the later ones: they stay queued
  // on the GPU) and returns the timings of every finished run, oldest first.
  std::vector<ChunkTiming> completed_through(uint64_t ticket);
  // Runs enqueued whose timing completed() has not returned yet.
  size_t in_flight() const;
  // Forgets a staged chunk without running it (error paths).
  void release(StagedChunk& chunk);
  // nullptr where `next` continues `first` in device memory: both resident
  // (no staging slot, no copy to wait for), and every column of `next`
  // starts where `first`'s ends, its validity bytes (if any) too
  // (column_regions.hpp places consecutive chunks so). Then join() makes
  // them one chunk that one launch aggregates. Else why not (EXPLAIN counts
  // the reasons).
  static const char* join_refusal(const StagedChunk& first, const StagedChunk& next);
  static void join(StagedChunk& first, StagedChunk&& next);
  // Rows [offset, offset + rows) of a staged chunk as a chunk of their own
  // for one run() (a race screen's slices, gpu/engine/gpu_run.cpp): the
  // same device columns at a row offset, with the chunk's copy waits but no
  // leases and no staging slot, so it must run before `chunk` itself, whose
  // run() holds the leases and frees the slot. `offset` keeps every column's
  // start on the 256-byte boundary when it is a multiple of kSliceRowAlign.
  static constexpr int64_t kSliceRowAlign = 1024;
  static StagedChunk slice_view(const StagedChunk& chunk, int64_t offset, int64_t rows);
  // Drops the first `rows` rows of a staged chunk (its leases and slot stay).
  static void drop_front(StagedChunk& chunk, int64_t rows);
  const PipelineStats& stats() const { return stats_; }
  void reset_stats() {
    stats_ = {};
    span_started_ = false;
  }
  int device() const { return device_; }

  struct Impl;

 private:
  int device_;
  PipelineStats stats_;
  bool span_started_ = false;  // the span event was recorded since reset_stats()
  std::unique_ptr<Impl> impl_;
};

// Host-only (no CUDA call): defined here so that CPU-only builds need no stub.
inline StagedChunk ChunkPipeline::slice_view(const StagedChunk& chunk, int64_t offset, int64_t rows) {
  StagedChunk out;
  out.rows = rows;
  out.widths = chunk.widths;
  out.waits = chunk.waits;
  out.columns.resize(chunk.columns.size());
  for (size_t i = 0; i < chunk.columns.size(); ++i) {
    const ColumnPointer& c = chunk.columns[i];
    // Validity is one byte per row (stage() copies the host's byte array).
    out.columns[i] = ColumnPointer{c.data ? static_cast<const char*>(c.data) + offset * chunk.widths[i] : nullptr,
                                   c.validity ? c.validity + offset : nullptr};
  }
  return out;
}

inline void ChunkPipeline::drop_front(StagedChunk& chunk, int64_t rows) {
  const StagedChunk rest = slice_view(chunk, rows, chunk.rows - rows);
  chunk.columns = rest.columns;
  chunk.rows = rest.rows;
}

}  // namespace tally::gpu
