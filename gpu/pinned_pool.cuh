#pragma once
// Pinned (page-locked) host buffers reused across queries. cudaHostAlloc
// costs from a tenth of a millisecond to milliseconds, more than copying a
// query's result or its overflow counters, so aggregators take their pinned
// memory from this process-wide pool and give it back when they go.
#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include "gpu/cuda_check.cuh"
#include "gpu/first_use_counts.hpp"

namespace tally::gpu {

namespace detail {
// Free blocks kept for reuse; beyond this the smallest is freed.
constexpr size_t kPinnedPoolKeep = 24;  // start_up.cu prepares 16 of graded sizes
// Smallest block handed out (one page: counters, small results).
constexpr size_t kPinnedMinBytes = 4096;

struct PinnedPool {
  std::mutex mutex;
  std::vector<std::pair<void*, size_t>> free;  // (pointer, bytes)
};
// Never destroyed: buffers may be returned during static destruction.
inline PinnedPool& pinned_pool() {
  static PinnedPool* pool = new PinnedPool;
  return *pool;
}
}  // namespace detail

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { release(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }

  // At least `bytes` (contents unspecified). The caller makes sure no copy
  // into the old block is still in flight.
  void ensure(size_t bytes) {
    if (bytes <= bytes_) return;
    release();
    detail::PinnedPool& pool = detail::pinned_pool();
    {
      std::lock_guard lock(pool.mutex);
      size_t best = pool.free.size();
      for (size_t i = 0; i < pool.free.size(); ++i) {
        if (pool.free[i].second >= bytes && (best == pool.free.size() || pool.free[i].second < pool.free[best].second))
          best = i;
      }
      if (best < pool.free.size()) {
        ptr_ = pool.free[best].first;
        bytes_ = pool.free[best].second;
        pool.free.erase(pool.free.begin() + static_cast<long>(best));
        return;
      }
    }
    size_t want = detail::kPinnedMinBytes;
    while (want < bytes) want *= 2;
    TALLY_CUDA_CHECK(cudaHostAlloc(&ptr_, want, cudaHostAllocDefault));
    bytes_ = want;
    first_use_counts().pinned_allocations.fetch_add(1, std::memory_order_relaxed);
    first_use_counts().pinned_bytes.fetch_add(want, std::memory_order_relaxed);
  }

  void release() noexcept {
    if (!ptr_) return;
    detail::PinnedPool& pool = detail::pinned_pool();
    std::lock_guard lock(pool.mutex);
    pool.free.emplace_back(ptr_, bytes_);
    ptr_ = nullptr;
    bytes_ = 0;
    if (pool.free.size() > detail::kPinnedPoolKeep) {
      size_t smallest = 0;
      for (size_t i = 1; i < pool.free.size(); ++i)
        if (pool.free[i].second < pool.free[smallest].second) smallest = i;
      (void)cudaFreeHost(pool.free[smallest].first);  // noexcept path: an error here loses nothing
      pool.free.erase(pool.free.begin() + static_cast<long>(smallest));
    }
  }

  template <class T = void>
  T* get() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace tally::gpu
