#pragma once
// Sticky device errors. CUDA reports some errors (illegal address, launch
// failure) as sticky: the context is unusable until the process restarts. When
// one is seen the GPU is marked unusable so the planner routes queries to the
// CPU engine; the statement that saw it gets Error(XX000, "GPU: <cause>").
#include <string>

namespace tally::gpu {

// False once a sticky device error has been observed in this process.
bool gpu_usable();
// The first sticky error's description ("" when none).
std::string gpu_unusable_reason();
// Records a sticky error (thread-safe; the first reason wins).
void mark_gpu_unusable(const std::string& reason);

}  // namespace tally::gpu
