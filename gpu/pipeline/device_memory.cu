#include <cstdint>
#include <mutex>
#include <set>

#include "gpu/device_buffer.cuh"

namespace tally::gpu {

void configure_memory_pool(int device) {
  static std::mutex mutex;
  static std::set<int> configured;
  std::lock_guard lock(mutex);
  if (configured.count(device)) return;
  cudaMemPool_t pool;
  TALLY_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  // Keep freed blocks cached in the pool: queries allocate and free the same
  // scratch sizes chunk after chunk.
  uint64_t threshold = UINT64_MAX;
  TALLY_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  configured.insert(device);
}

}  // namespace tally::gpu
