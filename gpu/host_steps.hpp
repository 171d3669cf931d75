#pragma once
// Where the host spends its time while it enqueues a chunk (EXPLAIN ANALYZE's
// "GPU: enqueue per chunk" line). The GPU engine is host-bound when the host's
// work per chunk comes close to the chunk's kernel time, so each CUDA call or
// wait on the enqueue path is timed into the calling thread's active
// HostSteps, if one is set (a GpuRun sets it around its chunk's enqueue).
// Two clock reads per step: tens of nanoseconds against steps of microseconds.
// Host-only header: usable from .cpp and .cu files alike.
#include <sched.h>
#include <sys/resource.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string_view>

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

namespace tally::gpu {

// Named points on a query's host path, in microseconds after an origin
// (EXPLAIN ANALYZE's "GPU: start path" and "GPU: end path" lines): where the
// time between a GpuRun's creation and its first kernel, and between the
// last chunk and the result, goes. A GpuRun activates one for its first
// chunks and for its finalize; code below it (the pipeline, the aggregator)
// marks through host_mark(), which costs one thread-local read when no
// timeline is active. Bounded: marks past kMaxMarks are dropped.
class HostTimeline {
 public:
  static constexpr int kMaxMarks = 40;
  explicit HostTimeline(std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now())
      : origin_(origin) {}
  void mark(const char* label) { mark(label, -1, ""); }
  // A mark with a count and its unit (page faults, a CPU number, ...),
  // shown after the time: "keys 3690.1 (12 faults)".
  void mark(const char* label, long count, const char* unit) {
    if (count_ >= kMaxMarks) return;
    marks_[count_++] =
        Mark{label, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_).count(), count, unit};
  }
  struct Mark {
    const char* label = "";
    double us = 0;
    long count = -1;  // < 0: none
    const char* unit = "";
  };
  int size() const { return count_; }
  const Mark& operator[](int i) const { return marks_[i]; }
  // The time of the first mark named `label` (nullptr: none).
  const Mark* find(const char* label) const {
    for (int i = 0; i < count_; ++i)
      if (std::string_view(marks_[i].label) == label) return &marks_[i];
    return nullptr;
  }

 private:
  std::chrono::steady_clock::time_point origin_;
  std::array<Mark, kMaxMarks> marks_{};
  int count_ = 0;
};

// The timeline the current thread marks into (nullptr: none).
inline HostTimeline*& active_host_timeline() {
  static thread_local HostTimeline* active = nullptr;
  return active;
}

inline void host_mark(const char* label) {
  if (HostTimeline* t = active_host_timeline()) t->mark(label);
}
inline void host_mark(const char* label, long count, const char* unit) {
  if (HostTimeline* t = active_host_timeline()) t->mark(label, count, unit);
}

// The calling thread's minor page faults and context switches so far
// (getrusage(RUSAGE_THREAD), well under a microsecond): what a host step
// spends besides its own instructions. A fresh array's first touch costs a
// fault per 4 KiB page, which the kernel zeroes.
struct ThreadUsage {
  long minor_faults = 0;
  long switches = 0;  // voluntary + involuntary
};
inline ThreadUsage thread_usage() {
  rusage u{};
  if (getrusage(RUSAGE_THREAD, &u) != 0) return {};
  return ThreadUsage{u.ru_minflt, u.ru_nvcsw + u.ru_nivcsw};
}

// Event waits (event_wait.cuh) of the calling thread that outlasted their
// spin and blocked: the end path shows how many the wait for the last
// chunks took (a thread that slept may come back on a slower core).
inline uint64_t& blocked_waits() {
  static thread_local uint64_t n = 0;
  return n;
}

// The thread's effective clock in MHz, from a chain of 2,048 dependent
// 64-bit multiplies (3 cycles each on x86-64 cores since Sandy Bridge):
// ~2 us at 3 GHz. Shows whether a core came back from a sleep slow (a low
// frequency state) when a host step takes longer than its bytes explain.
inline long clock_probe_mhz() {
  constexpr int kSteps = 2048;
  constexpr double kCyclesPerStep = 3.0;  // imul r64 latency
  uint64_t x = 0x9E3779B97F4A7C15ull;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kSteps; ++i) {
    x *= 0xBF58476D1CE4E5B9ull;
    asm volatile("" : "+r"(x));  // keeps the chain: no closed form, no vectorizing
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  return ns > 0 ? static_cast<long>(kSteps * kCyclesPerStep / ns * 1e3) : -1;
}

// Sets the thread's active timeline for a scope (nullptr: none).
class HostTimelineScope {
 public:
  explicit HostTimelineScope(HostTimeline* timeline) : previous_(active_host_timeline()) {
    active_host_timeline() = timeline;
  }
  ~HostTimelineScope() { active_host_timeline() = previous_; }
  HostTimelineScope(const HostTimelineScope&) = delete;
  HostTimelineScope& operator=(const HostTimelineScope&) = delete;

 private:
  HostTimeline* previous_;
};

}  // namespace tally::gpu
