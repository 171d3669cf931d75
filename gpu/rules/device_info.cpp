#include "gpu/rules/device_info.hpp"

#include <fmt/format.h>

namespace tally::gpu {

std::string DeviceInfo::describe() const {
  return fmt::format("{} (sm_{}{}, {} SMs, {:.1f} GiB, L2 {} MiB, smem {} KiB/block opt-in, {} KiB/SM, driver {}.{})",
                     name, compute_major, compute_minor, sm_count,
                     static_cast<double>(total_memory) / (1u << 30), l2_bytes >> 20,
                     shared_memory_per_block_optin >> 10, shared_memory_per_sm >> 10,
                     driver_version / 1000, (driver_version % 1000) / 10);
}

std::string DeviceInfo::fingerprint() const {
  return name + "|sm_" + std::to_string(compute_major) + std::to_string(compute_minor) + "|" + std::to_string(sm_count) +
         "sm|" + std::to_string(static_cast<int64_t>(total_memory)) + "B|drv" + std::to_string(driver_version);
}

}  // namespace tally::gpu
