#pragma once
// Busy polling of session reads (the idea of Linux's net.core.busy_read, in
// user space): after a session has answered, it keeps trying a non-blocking
// read for a short window before it blocks, but only while few
// sessions are open.
//
// Why: with one client, a round trip costs two thread wake-ups (the session's,
// then the client's). On a VM each wake-up of a thread on another vCPU is an
// IPI and a halted vCPU to resume: 50-300 us, against a few us of work
// (bench/connect/results.md, 2026-11-22 14:09: 35-45k round trips/s with
// client and server on one vCPU, 2.6-3.3k on two). A session that is still
// trying when the next message arrives needs no wake-up at all.
//
// Why only while few sessions are open: with many clients the next message
// of some session is always there, and a spinning session would take a core
// that another session or the client needs. A session may spin only while the
// open sessions (stream made to stream ended, idle or not), itself included,
// are at most half the hardware threads (at least one): each spinning
// session's client needs a core too when it runs on the same host, and an
// idle open connection's client may send at any moment.
//
// The gate costs nothing when it says no: before each read a session reads
// the open count (a counter written only when a connection opens or closes),
// and nothing else. Until 2026-11-22 16:30 the sessions also kept
// a count of the *active* ones, written (a locked add on one cache line
// shared by every session) twice around every blocking wait; since
// active <= open always, that count never decided anything the open count
// did not, and it was removed.
//
// Nor while the host is busy: a session spins only while the runnable tasks
// of the whole host (/proc/loadavg's fourth field, sampled at most every
// 20 ms, and only by a session the open-count gate let through) are at most
// the hardware threads. On the shared development VM with
// builds running, spinning regardless cost the 1-client round trips up to
// 48 % (0.52-1.12x of not spinning over four runs); on the quiet VM it gave
// 3x (bench/connect/results.md, 2026-11-22 14:03-15:31).
#include <atomic>
#include <chrono>
#include <cstdint>

namespace tally::server {

class BusyPoll {
 public:
  // window 0 disables spinning; max_open 0 means half the hardware threads.
  explicit BusyPoll(std::chrono::microseconds window, unsigned max_open = 0);

  std::chrono::microseconds window() const { return window_; }
  unsigned max_open() const { return max_open_; }
  unsigned hardware_threads() const { return hardware_threads_; }

  // Whether a session that found no input should spin before it blocks.
  // The cheap tests come first; with more sessions open than max_open() this
  // is two loads (the window, the open count).
  bool may_spin() {
    return window_.count() > 0 && open_.load(std::memory_order_relaxed) <= static_cast<int>(max_open_) &&
           host_has_idle_core();
  }

  // Open sessions (stream made to stream ended), idle or not. With 8 pgbench
  // clients on the 2-vCPU VM, moments with one session busy and seven
  // waiting are frequent, and spinning then cost the 8-client prepared cell
  // 0.86x of not spinning (bench/connect/results.md, 15:47 UTC).
  void session_opened() { open_.fetch_add(1, std::memory_order_relaxed); }
  void session_closed() { open_.fetch_sub(1, std::memory_order_relaxed); }
  int open() const { return open_.load(std::memory_order_relaxed); }

  // Outcome of one spin, for tally_session_busy_polls_total{outcome}: hit when
  // input arrived within the window (a wake-up saved), miss when it did not
  // (the window's CPU time spent for nothing).
  static void count_spin(bool hit);

  // Runnable tasks on the host, or -1 when /proc/loadavg cannot be read.
  static int host_running_tasks();

  // Samples of the host load that found it busy (no spinning for the next
  // 20 ms). A test that expects a spin asks this instead of sampling the
  // load itself: its own samples, taken before and after, can miss the one
  // the sessions took in between (CI, 2026-11-23: a spin expected, none
  // made, with the test's two samples quiet).
  uint64_t host_busy_samples() const { return host_busy_samples_.load(std::memory_order_relaxed); }

 private:
  // Whether the last sample of host_running_tasks() (taken now when the last
  // is older than 20 ms) was at most the hardware threads.
  bool host_has_idle_core();

  std::chrono::microseconds window_;
  unsigned max_open_;
  std::atomic<int> open_{0};
  unsigned hardware_threads_;
  std::atomic<int64_t> next_sample_ns_{0};
  std::atomic<bool> host_busy_{false};
  std::atomic<uint64_t> host_busy_samples_{0};
};

}  // namespace tally::server
