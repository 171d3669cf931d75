#pragma once
// Programs and columns one launch of the column-program kernels takes: kernel
// arguments (ProgramArgs, program_rows.cuh), so that a launch needs no copy
// of them first. Self-contained: NVRTC compiles it too.

namespace tally::gpu {

constexpr int kMaxDevicePrograms = 16;
constexpr int kMaxDeviceProgramColumns = 32;
constexpr int kMaxDeviceSteps = 256;

}  // namespace tally::gpu
