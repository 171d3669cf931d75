#include "gpu/device_info.hpp"

#include <fmt/format.h>

namespace tally::gpu {

std::string DeviceInfo::describe() const {
  return fmt::format("{} (sm_{}{}, {} SMs, {:.1f} GiB, L2 {} MiB, smem {} KiB/block opt-in, {} KiB/SM, driver {}.{})",
                     name, compute_major, compute_minor, sm_count,
                     static_cast<double>(total_memory) / (1u << 30), l2_bytes >> 20,
                     shared_memory_per_block_optin >> 10, shared_memory_per_sm >> 10,
                     driver_version / 1000, (driver_version % 1000) / 10);
}

}  // namespace tally::gpu
