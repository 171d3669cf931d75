#pragma once
// DeviceProperties: the hardware facts the tuner's cold-start rules and the
// tuning cache key need, as read from the device (cudaGetDeviceProperties,
// cudaDriverGetVersion) by gpu/. Host-only so the tuner builds without CUDA.
#include <cstdint>
#include <string>

namespace tally::gpu {

struct DeviceProperties {
  std::string name;                  // "NVIDIA H100 80GB HBM3"
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 1024;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int64_t shared_memory_per_block = 48 * 1024;  // opt-in maximum per block
  int64_t shared_memory_per_sm = 0;
  int64_t l2_cache_bytes = 0;
  int64_t global_memory_bytes = 0;
  int driver_version = 0;            // cudaDriverGetVersion, e.g. 12040

  // The tuning cache key of this device: entries measured on another GPU
  // (other name, compute capability, SM count, memory size or driver) never match.
  std::string fingerprint() const;
};

}  // namespace tally::gpu
