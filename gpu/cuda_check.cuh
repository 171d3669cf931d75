#pragma once
// The one CUDA-check macro. Every runtime call and every kernel launch goes
// through TALLY_CUDA_CHECK / TALLY_CUDA_CHECK_LAUNCH. A failure becomes
// Error(XX000, "GPU: <call>: <cause>"); a sticky error also marks the GPU
// unusable (gpu_health.hpp) so the server routes later queries to the CPU.
#include <cuda_runtime.h>

#include <string>

#include "common/error.hpp"
#include "gpu/gpu_health.hpp"

namespace tally::gpu::detail {

// Errors after which the CUDA context cannot be used again in this process.
inline bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  std::string cause = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (is_sticky(e)) mark_gpu_unusable(cause);
  // Clear a non-sticky error so the next call does not report it again.
  (void)cudaGetLastError();
  throw Error(SqlState::internal_error, "GPU: " + cause)
      .with_context(std::string(file) + ":" + std::to_string(line));
}

}  // namespace tally::gpu::detail

#define TALLY_CUDA_CHECK(call)                                                        \
  do {                                                                                \
    cudaError_t tally_cuda_status_ = (call);                                          \
    if (tally_cuda_status_ != cudaSuccess)                                            \
      ::tally::gpu::detail::throw_cuda_error(tally_cuda_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch: reports configuration errors at once (asynchronous
// faults surface at the next synchronizing call, which is checked too).
#define TALLY_CUDA_CHECK_LAUNCH(kernel_name)                                          \
  do {                                                                                \
    cudaError_t tally_cuda_status_ = cudaGetLastError();                              \
    if (tally_cuda_status_ != cudaSuccess)                                            \
      ::tally::gpu::detail::throw_cuda_error(tally_cuda_status_, "launch " kernel_name, __FILE__, __LINE__); \
  } while (0)
