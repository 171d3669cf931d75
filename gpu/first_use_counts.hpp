#pragma once
// Process-wide counts of the costs a query pays only the first time something
// is used in this process: pinned host blocks the pinned pool did not have
// (cudaHostAlloc, 0.1 ms to milliseconds, and implicitly synchronizing the
// device) and kernels whose attributes were first looked up (a kernel's first
// launch in the process). EXPLAIN ANALYZE prints a query's deltas beside the
// growth of the device's memory pool (first_use_snapshot), so a first query
// shows what start-up did not prepare (start_up.hpp warm_launch_paths). The
// counts are process-wide: a concurrent query's first uses show in both.
// Host-only header, included by the .cuh files that count.
#include <atomic>
#include <cstdint>
#include <string>

namespace tally::gpu {

struct FirstUseCounts {
  std::atomic<uint64_t> pinned_allocations{0};
  std::atomic<uint64_t> pinned_bytes{0};
  std::atomic<uint64_t> kernel_first_lookups{0};
};
inline FirstUseCounts& first_use_counts() {
  static FirstUseCounts counts;
  return counts;
}

struct FirstUseSnapshot {
  uint64_t pinned_allocations = 0;
  uint64_t pinned_bytes = 0;
  uint64_t kernel_first_lookups = 0;
  uint64_t pool_reserved_bytes = 0;  // the device's default memory pool, reserved (mapped) bytes
};
// The counts now and the pool's reserved bytes of `device` (0 when it cannot
// be read; always 0 in the CPU-only build). start_up.cu / gpu_stub.cpp.
FirstUseSnapshot first_use_snapshot(int device);

// EXPLAIN ANALYZE's line for what a query used first: the differences
// `after` - `before` (first_use_counts.cpp).
std::string first_use_line(const FirstUseSnapshot& before, const FirstUseSnapshot& after);

}  // namespace tally::gpu
