#include "gpu/tuner_bridge.hpp"

namespace tally::gpu {

DeviceProperties to_device_properties(const DeviceInfo& d) {
  DeviceProperties p;
  p.name = d.name;
  p.compute_major = d.compute_major;
  p.compute_minor = d.compute_minor;
  p.sm_count = d.sm_count;
  p.warp_size = d.warp_size;
  p.max_threads_per_block = d.max_threads_per_block;
  p.max_threads_per_sm = d.max_threads_per_sm;
  p.max_blocks_per_sm = d.max_blocks_per_sm;
  p.shared_memory_per_block = static_cast<int64_t>(d.shared_memory_per_block_optin);
  p.shared_memory_per_sm = static_cast<int64_t>(d.shared_memory_per_sm);
  p.l2_cache_bytes = static_cast<int64_t>(d.l2_bytes);
  p.global_memory_bytes = static_cast<int64_t>(d.total_memory);
  p.driver_version = d.driver_version;
  return p;
}

}  // namespace tally::gpu
