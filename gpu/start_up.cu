// prepare_for_queries (start_up.hpp).
#include "gpu/start_up.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <vector>

#include "gpu/device_buffer.cuh"
#include "gpu/group_by.hpp"
#include "gpu/pinned_pool.cuh"

namespace tally::gpu {

namespace {
// Pinned blocks made at start: two for results of up to ~2^17 groups (key,
// two 8-byte lanes and a NULL flag per group, plus the table's slots) and
// two for up to ~2^20; PinnedBuffer::ensure takes the smallest that fits.
constexpr size_t kPinnedSmallBytes = size_t{4} << 20;
constexpr size_t kPinnedLargeBytes = size_t{32} << 20;
// Never take more than this share of the free memory for the pool at start:
// the column cache's budget was computed from the same free memory.
constexpr double kMaxPoolShareOfFree = 0.25;
}  // namespace

void prepare_for_queries(const DeviceInfo& device) {
  static std::mutex mutex;
  static std::set<int> prepared;
  std::lock_guard lock(mutex);
  if (!prepared.insert(device.ordinal).second) return;
  if (cudaSetDevice(device.ordinal) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  configure_memory_pool(device.ordinal);
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  const uint64_t want = std::min<uint64_t>(device.total_memory / kScratchMemoryDivisor,
                                           static_cast<uint64_t>(static_cast<double>(free_bytes) * kMaxPoolShareOfFree));
  cudaStream_t s = nullptr;
  if (want > 0 && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) {
    // Allocated and freed on one stream: the pool keeps the physical memory
    // (release threshold raised) and later allocations of any size carve it.
    void* p = nullptr;
    if (cudaMallocAsync(&p, want, s) == cudaSuccess) (void)cudaFreeAsync(p, s);
    (void)cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
  }
  (void)cudaGetLastError();
  // Blocks go back to the process-wide pool when the buffers go.
  std::vector<PinnedBuffer> blocks(4);
  try {
    blocks[0].ensure(kPinnedSmallBytes);
    blocks[1].ensure(kPinnedSmallBytes);
    blocks[2].ensure(kPinnedLargeBytes);
    blocks[3].ensure(kPinnedLargeBytes);
  } catch (const std::exception&) {
    // No pinned memory to spare: queries allocate their own, as before.
  }
}

}  // namespace tally::gpu
