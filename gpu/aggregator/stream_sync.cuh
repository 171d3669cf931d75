#pragma once
// One reusable event on the aggregator's stream: waiting for everything
// enqueued so far by polling it (event_wait.cuh) rather than sleeping in
// cudaStreamSynchronize, and marking the end of an enqueued extraction.
#include <cuda_runtime.h>

#include "gpu/cuda_check.cuh"
#include "gpu/event_wait.cuh"

namespace tally::gpu::aggregator {

class StreamSync {
 public:
  explicit StreamSync(cudaStream_t stream) : stream_(stream) {}
  ~StreamSync() {
    if (event_) (void)cudaEventDestroy(event_);  // destructor: errors cannot be thrown
  }
  StreamSync(const StreamSync&) = delete;
  StreamSync& operator=(const StreamSync&) = delete;

  // Records the event behind the work enqueued so far (created on first use).
  void record() {
    if (!event_) TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    TALLY_CUDA_CHECK(cudaEventRecord(event_, stream_));
  }
  // Waits for the last record().
  void wait() const { wait_event(event_); }
  // Waits for everything enqueued on the stream so far.
  void sync() {
    record();
    wait();
  }
  // Whether the GPU is still busy with the work before the last record()
  // (false once done, or failed: wait() reports the failure).
  bool busy() const { return cudaEventQuery(event_) == cudaErrorNotReady; }

 private:
  cudaStream_t stream_;
  cudaEvent_t event_ = nullptr;
};

}  // namespace tally::gpu::aggregator
