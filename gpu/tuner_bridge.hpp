#pragma once
// Conversions between gpu/'s types and the tuner's vocabulary
// (gpu/tuner/device_properties.hpp, variant names in the tuning cache).
#include "gpu/device_info.hpp"
#include "gpu/tuner/device_properties.hpp"

namespace tally::gpu {

// The tuner's view of a device, filled from what gpu/ read off the device.
DeviceProperties to_device_properties(const DeviceInfo& d);

}  // namespace tally::gpu
