#include <cuda_runtime.h>

#include "gpu/cuda_check.cuh"
#include "gpu/rules/device_info.hpp"

namespace tally::gpu {

bool built_with_cuda() { return true; }

void use_device(int ordinal) {
  const cudaError_t e = cudaSetDevice(ordinal);
  if (e != cudaSuccess) {
    throw Error(SqlState::internal_error, "GPU: cannot use device " + std::to_string(ordinal) + ": " + cudaGetErrorString(e));
  }
}

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver / no device: not an error for tallyd
    return 0;
  }
  return gpu_usable() ? n : 0;
}

DeviceInfo query_device(int ordinal) {
  DeviceInfo d;
  d.ordinal = ordinal;
  cudaDeviceProp p{};
  TALLY_CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  d.name = p.name;
  d.compute_major = p.major;
  d.compute_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  d.warp_size = p.warpSize;
  d.shared_memory_per_block = p.sharedMemPerBlock;
  d.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
  d.shared_memory_per_sm = p.sharedMemPerMultiprocessor;
  d.reserved_shared_memory_per_block = p.reservedSharedMemPerBlock;
  d.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  d.total_memory = p.totalGlobalMem;
  int clock = 0, bus = 0;
  (void)cudaDeviceGetAttribute(&clock, cudaDevAttrMemoryClockRate, ordinal);
  (void)cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, ordinal);
  (void)cudaGetLastError();
  d.memory_clock_khz = clock;
  d.memory_bus_width_bits = bus;
  TALLY_CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  TALLY_CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
  int current = 0;
  TALLY_CUDA_CHECK(cudaGetDevice(&current));
  if (current == ordinal) {
    size_t free_b = 0, total_b = 0;
    TALLY_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    d.free_memory = free_b;
  }
  return d;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> out;
  const int n = device_count();
  for (int i = 0; i < n; ++i) out.push_back(query_device(i));
  return out;
}

}  // namespace tally::gpu
