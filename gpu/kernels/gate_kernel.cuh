#pragma once
// The launch gate (ChunkPipeline::hold_gate): one thread that holds its
// stream until the host writes a release ticket into mapped pinned memory,
// so that the work the host enqueues behind it starts back to back once the
// host is done enqueueing, instead of trickling in as the host issues it.
// Bounded: after `timeout_ns` of device time the gate opens by itself and
// counts a timeout, so a host that never releases it (a thread that died or
// waits on work behind the gate) cannot hold the GPU.
#include <cstdint>

namespace tally::gpu::kernels {

// gate[0]: the last ticket the host released; gate[1]: timeouts (device-written).
__global__ void gate_kernel(volatile uint32_t* gate, uint32_t ticket, uint64_t timeout_ns) {
  uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  // Wrap-safe: released once the host's ticket reached ours.
  while (static_cast<int32_t>(gate[0] - ticket) < 0) {
    __nanosleep(256);  // polls host memory over the bus; ~1 us of release latency
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      gate[1] = gate[1] + 1;
      return;
    }
  }
}

}  // namespace tally::gpu::kernels
