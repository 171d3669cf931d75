#pragma once
// Where the host spends its time while it enqueues a chunk (EXPLAIN ANALYZE's
// "GPU: enqueue per chunk" line). The GPU engine is host-bound when the host's
// work per chunk comes close to the chunk's kernel time, so each CUDA call or
// wait on the enqueue path is timed into the calling thread's active
// HostSteps, if one is set (a GpuRun sets it around its chunk's enqueue).
// Two clock reads per step: tens of nanoseconds against steps of microseconds.
// Host-only header: usable from .cpp and .cu files alike.
#include <array>
#include <chrono>
#include <cstdint>

namespace tally::gpu {

enum class HostStep : int {
  in_flight_wait,  // ChunkPipeline::run waiting for the oldest chunk in flight
  stream_waits,    // cudaStreamWaitEvent on the chunk's copy/cache events
  events,          // timing events recorded around the chunk
  make_room,       // reading (or waiting for) overflow observations before a launch
  launch,          // the variant's launch path: checks, attributes, kernels
  observe,         // queueing an overflow observation (copy + event)
  settle,          // synchronous settling (partitioned variant owning its output, growth)
  count
};

struct HostSteps {
  std::array<double, static_cast<int>(HostStep::count)> us{};
  void add(HostStep s, double v) { us[static_cast<int>(s)] += v; }
  double operator[](HostStep s) const { return us[static_cast<int>(s)]; }
};

// The steps the current thread adds to (nullptr: none).
inline HostSteps*& active_host_steps() {
  static thread_local HostSteps* active = nullptr;
  return active;
}

// Sets the thread's active HostSteps for a scope.
class HostStepsScope {
 public:
  explicit HostStepsScope(HostSteps* steps) : previous_(active_host_steps()) { active_host_steps() = steps; }
  ~HostStepsScope() { active_host_steps() = previous_; }
  HostStepsScope(const HostStepsScope&) = delete;
  HostStepsScope& operator=(const HostStepsScope&) = delete;

 private:
  HostSteps* previous_;
};

// Times one step into the active HostSteps.
class HostStepTimer {
 public:
  explicit HostStepTimer(HostStep step) : step_(step), steps_(active_host_steps()) {
    if (steps_) start_ = std::chrono::steady_clock::now();
  }
  ~HostStepTimer() {
    if (steps_) steps_->add(step_, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count());
  }
  HostStepTimer(const HostStepTimer&) = delete;
  HostStepTimer& operator=(const HostStepTimer&) = delete;

 private:
  HostStep step_;
  HostSteps* steps_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tally::gpu
