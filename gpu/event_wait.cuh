#pragma once
// Host waits for CUDA events on the query path. cudaEventSynchronize may put
// the thread to sleep in the driver, and a woken thread can come back tens of
// microseconds after the event, while the GPU runs out of queued work: the
// engine's waits (a chunk slot, an overflow observation, the result) are
// short, so they poll instead, and block only after kSpinLimit.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "gpu/cuda_check.cuh"
#include "gpu/host_steps.hpp"  // blocked_waits

namespace tally::gpu {

// Longest poll before blocking: a few chunks' kernel time; a longer wait
// (a large sort, a grown table) sleeps rather than burn a core.
constexpr std::chrono::microseconds kSpinLimit{2000};

inline void wait_event(cudaEvent_t e) {
  const auto until = std::chrono::steady_clock::now() + kSpinLimit;
  for (;;) {
    const cudaError_t q = cudaEventQuery(e);
    if (q != cudaErrorNotReady) {
      TALLY_CUDA_CHECK(q);
      return;
    }
    if (std::chrono::steady_clock::now() > until) break;
    std::this_thread::yield();
  }
  ++blocked_waits();
  TALLY_CUDA_CHECK(cudaEventSynchronize(e));
}

}  // namespace tally::gpu
