#pragma once
// Observes the global table's overflow counters without stalling the stream.
// After a launch the counters (occupied, spilled, lost, direct) are copied
// into pinned host memory and an event is recorded; the host reads an
// observation once its event has completed. A row spills at most once, so
// the rows launched since the last observed zero spill count bound what the
// spill buffer may hold: the aggregator waits for an older observation (the
// GPU keeps running the queued launches) only when the next launch could
// overflow the buffer, and synchronizes to grow the table only when a spill
// actually happened (TypedAggregator::make_room_for).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <deque>

#include "gpu/aggregator/kernels/views.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/event_wait.cuh"
#include "gpu/pinned_pool.cuh"

namespace tally::gpu::aggregator {

// Overflow observations in flight (pinned counter copies + events).
constexpr int kObservationRing = 8;

class OverflowObserver {
 public:
  using ull = kernels::ull;
  // Counters each observation copies, from the table's first counter on.
  static constexpr int kObservedCounters = 4;

  explicit OverflowObserver(cudaStream_t stream) : stream_(stream) {}
  ~OverflowObserver() {
    // Destructor: errors cannot be thrown; the copies into the pinned
    // counters must be done before the memory goes.
    if (pinned_counters_) (void)cudaStreamSynchronize(stream_);
    for (cudaEvent_t e : events_)
      if (e) (void)cudaEventDestroy(e);
  }
  OverflowObserver(const OverflowObserver&) = delete;
  OverflowObserver& operator=(const OverflowObserver&) = delete;

  bool full() const { return static_cast<int>(observations_.size()) == kObservationRing; }
  bool in_flight() const { return !observations_.empty(); }
  // Observations in flight, or launched rows no observation has cleared.
  bool outstanding() const { return !observations_.empty() || unsettled_rows_ > 0; }
  // Anything settle() must read: outstanding() or unverified launches.
  bool unsettled() const { return outstanding() || unverified_; }

  // A launch of `rows` rows that an observation must clear.
  void launched(uint64_t rows) {
    unobserved_rows_ += rows;
    unsettled_rows_ += rows;
  }
  uint64_t unobserved_rows() const {
    return unobserved_rows_;
  }  // since the last observation was queued
  uint64_t unsettled_rows() const {
    return unsettled_rows_;
  }  // since the last observed zero spill count
  // Launches exempted from observation (TypedAggregator::cannot_overflow)
  // ran since the counters were last read: settle() and finish() read them.
  void set_unverified(bool unverified) { unverified_ = unverified; }
  // Forgets everything in flight (the counters are read, or the groups reset).
  void clear() {
    observations_.clear();
    unsettled_rows_ = 0;
    unobserved_rows_ = 0;
    unverified_ = false;
  }

  // Queues a copy of `counters` (kObservedCounters values) and its event.
  // The ring must not be full().
  void enqueue(const ull* counters) {
    if (!pinned_counters_) {
      staging_.ensure(kObservationRing * kObservedCounters * sizeof(ull));
      pinned_counters_ = staging_.get<ull>();
      for (auto& e : events_)
        TALLY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
    const int slot = next_slot_;
    next_slot_ = (next_slot_ + 1) % kObservationRing;
    TALLY_CUDA_CHECK(cudaMemcpyAsync(pinned_counters_ + kObservedCounters * slot, counters,
                                     kObservedCounters * sizeof(ull), cudaMemcpyDeviceToHost,
                                     stream_));
    TALLY_CUDA_CHECK(cudaEventRecord(events_[slot], stream_));
    observations_.push_back(Observation{slot, unobserved_rows_});
    unobserved_rows_ = 0;
  }

  // The oldest observation's counters (waiting for them when `wait`);
  // nullptr when there is none or it has not completed.
  const ull* oldest(bool wait) const {
    if (observations_.empty()) return nullptr;
    const Observation o = observations_.front();
    cudaEvent_t e = events_[o.slot];
    if (wait) {
      wait_event(e);
    } else {
      const cudaError_t q = cudaEventQuery(e);
      if (q == cudaErrorNotReady) return nullptr;
      TALLY_CUDA_CHECK(q);
    }
    return pinned_counters_ + kObservedCounters * o.slot;
  }
  // Drops the oldest observation, which showed no spill: its rows are settled.
  void pop_oldest() {
    const Observation o = observations_.front();
    observations_.pop_front();
    unsettled_rows_ -= std::min(unsettled_rows_, o.rows);
  }

 private:
  struct Observation {
    int slot = 0;
    uint64_t rows =
        0;  // rows launched up to and including this observation's launch, since the previous one
  };

  cudaStream_t stream_;
  PinnedBuffer staging_;
  ull* pinned_counters_ = nullptr;  // in staging_
  cudaEvent_t events_[kObservationRing] = {};
  int next_slot_ = 0;
  std::deque<Observation> observations_;
  uint64_t unsettled_rows_ = 0;
  uint64_t unobserved_rows_ = 0;
  bool unverified_ = false;
};

}  // namespace tally::gpu::aggregator
