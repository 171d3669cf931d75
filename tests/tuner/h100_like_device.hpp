#pragma once
// The H100's properties as the CUDA runtime reports them, for the tuner tests
// that drive ChunkTuner on CPU: the rules derive every limit from these.
#include "gpu/device_info.hpp"

namespace tally::gpu::testing {

inline DeviceInfo h100_like(int driver = 13000) {
  DeviceInfo d;
  d.ordinal = 0;
  d.name = "NVIDIA H100 80GB HBM3";
  d.compute_major = 9;
  d.compute_minor = 0;
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.shared_memory_per_block = 48 * 1024;
  d.shared_memory_per_block_optin = 227 * 1024;
  d.shared_memory_per_sm = 228 * 1024;
  d.reserved_shared_memory_per_block = 1024;
  d.l2_bytes = 50u << 20;
  d.total_memory = 80ull << 30;
  d.driver_version = driver;
  return d;
}

}  // namespace tally::gpu::testing
