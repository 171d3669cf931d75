#pragma once
// Owning device allocation from the stream-ordered memory pool
// (cudaMallocAsync). Freed memory stays in the pool (release threshold raised
// in device_memory.cu), so per-chunk scratch buffers cost no cudaMalloc.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpu/cuda_check.cuh"

namespace tally::gpu {

// Raises the device's default pool release threshold once per process.
void configure_memory_pool(int device);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(size_t bytes, cudaStream_t stream) { allocate(bytes, stream); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }

  // Makes the buffer at least `bytes` long; contents are not preserved.
  void ensure(size_t bytes, cudaStream_t stream) {
    if (bytes <= bytes_) return;
    release();
    allocate(bytes, stream);
  }
  void release() noexcept {
    if (ptr_) (void)cudaFreeAsync(ptr_, stream_);  // destructor path: cannot throw
    ptr_ = nullptr;
    bytes_ = 0;
  }

  template <class T = void>
  T* get() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void allocate(size_t bytes, cudaStream_t stream) {
    stream_ = stream;
    if (bytes == 0) return;
    TALLY_CUDA_CHECK(cudaMallocAsync(&ptr_, bytes, stream));
    bytes_ = bytes;
  }
  void swap(DeviceBuffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(stream_, o.stream_);
  }

  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace tally::gpu
