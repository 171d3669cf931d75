#include "gpu/tuner/device_properties.hpp"

namespace tally::gpu {

std::string DeviceProperties::fingerprint() const {
  return name + "|sm_" + std::to_string(compute_major) + std::to_string(compute_minor) + "|" +
         std::to_string(sm_count) + "sm|" + std::to_string(global_memory_bytes) + "B|drv" +
         std::to_string(driver_version);
}

}  // namespace tally::gpu
