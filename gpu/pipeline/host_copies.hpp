#pragma once
// Host-to-host copies cut into pieces and run on a few persistent threads,
// the caller's among them: a cold chunk's columns into pinned staging. One
// core copies 5-8 GB/s, so a column copied on the staging thread alone kept
// a cold read at a fraction of the link's speed (the GPU idled between
// chunks). Thread-safe: concurrent callers share the threads.
// Host-only: builds without CUDA.
#include <cstddef>
#include <span>

namespace tally::gpu {

struct HostRange {
  void* to = nullptr;
  const void* from = nullptr;
  size_t bytes = 0;
};

// Copies every range; returns when all bytes are in place.
void copy_host_ranges(std::span<const HostRange> ranges);

}  // namespace tally::gpu
