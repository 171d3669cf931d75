#pragma once
// What Tally knows about one CUDA device, read from the device at start-up
// (never written as constants: STYLE.md). Host-only header: builds without nvcc.
#include <cstdint>
#include <string>
#include <vector>

namespace tally::gpu {

struct DeviceInfo {
  int ordinal = -1;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int warp_size = 32;
  size_t shared_memory_per_block = 0;         // default limit without opt-in
  size_t shared_memory_per_block_optin = 0;   // after cudaFuncSetAttribute: what the rules plan with
  size_t shared_memory_per_sm = 0;
  size_t reserved_shared_memory_per_block = 0;  // the runtime keeps this per resident block
  size_t l2_bytes = 0;
  size_t total_memory = 0;
  size_t free_memory = 0;  // when queried
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  int driver_version = 0;   // e.g. 13000
  int runtime_version = 0;

  // "<name> (sm_90, 132 SMs, 79.2 GiB, L2 50 MiB, ...)".
  std::string describe() const;
  // The tuning cache's device key: entries measured on another GPU (other
  // name, compute capability, SM count, memory size or driver) never match.
  // Persisted caches are keyed by this exact text.
  std::string fingerprint() const;
};

// Number of usable CUDA devices; 0 when the build has no CUDA, no driver or no
// device (never throws: tallyd must start unchanged on a machine without a GPU).
int device_count();

// Properties of device `ordinal`, read from the device. Throws Error(XX000) when
// the device cannot be queried.
DeviceInfo query_device(int ordinal);

// All usable devices; empty without a GPU.
std::vector<DeviceInfo> list_devices();

// Makes device `ordinal` the calling thread's current device (CUDA calls
// that name no device use it). Throws Error(XX000) when it cannot.
void use_device(int ordinal);

// True when this binary was compiled with the CUDA engine.
bool built_with_cuda();

}  // namespace tally::gpu
