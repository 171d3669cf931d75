#pragma once
// Fork-join helpers of the CPU engine: a static split of a row range over
// threads (each thread's part is contiguous, so two calls with the same
// arguments give every part the same rows), and a dynamic task loop for work
// of uneven size (radix partitions). The first exception a part throws is
// rethrown on the calling thread after every started part has finished.
//
// Parts run on the process-wide WorkerPool, not on threads started per call:
// starting and joining threads would cost a small GROUP BY most of its
// execution time. The caller
// runs part 0 and then takes every part no worker has claimed yet, so a busy
// pool (another query, a nested call from a worker) only means the caller
// does more parts itself: nothing ever waits for a task to start.
// Each part starts with a look at the statement's cancel token (the caller's,
// installed in the pool's tasks too, as are its memory tracker and time
// zone), so cancel
// stops a long run between parts.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/engine_counters.hpp"
#include "common/memory_tracker.hpp"
#include "common/prefault.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/types/thread_settings.hpp"

namespace tally::executor::cpu {

namespace detail {

// What the caller and the pool tasks of one parallel_for share. Pool tasks
// hold it by shared_ptr: one may start after the call returned (every part
// taken by then), and it then only reads `next`.
struct ForkJoin {
  std::atomic<size_t> next{1};  // part 0 is the caller's
  size_t parts = 0;
  std::mutex mutex;
  std::condition_variable finished_cv;
  size_t finished = 0;          // parts done, under mutex
  std::exception_ptr error;     // the first part's exception, under mutex
};

}  // namespace detail

// f(part, begin, end) over [0, n) split into `threads` contiguous parts.
template <class F>
void parallel_for(int threads, size_t n, F&& f) {
  if (threads <= 1 || n < 2) {
    f(0, size_t{0}, n);
    return;
  }
  const size_t per = (n + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  const size_t parts = (n + per - 1) / per;  // non-empty parts only
  auto shared = std::make_shared<detail::ForkJoin>();
  shared->parts = parts;
  auto run_part = [&f, n, per](detail::ForkJoin& s, size_t part) {
    std::exception_ptr error;
    try {
      check_cancel_point();
      const size_t begin = part * per;
      f(static_cast<int>(part), begin, std::min(n, begin + per));
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(s.mutex);
    if (error && !s.error) s.error = error;
    if (++s.finished == s.parts) s.finished_cv.notify_all();
  };
  // Type-erased once: the pool's tasks call it through a pointer that is only
  // followed for a part claimed while the caller still waits below.
  using RunPart = decltype(run_part);
  const RunPart* run = &run_part;
  WorkerPool& pool = WorkerPool::shared();
  const size_t helpers = std::min(parts - 1, static_cast<size_t>(pool.workers()));
  const CancelToken* token = current_cancel_token();
  std::shared_ptr<MemoryTracker> tracker = current_memory_tracker();
  types::ThreadSettings settings = types::current_thread_settings();
  std::shared_ptr<StatementTrace> trace = current_statement_trace();
  for (size_t h = 0; h < helpers; ++h) {
    pool.submit([shared, run, token, tracker, settings, trace] {
      const CancelScope scope(token);
      const MemoryScope memory_scope(tracker);
      const types::ThreadSettingsScope settings_scope(settings);
      const StatementTraceScope trace_scope(trace);
      for (size_t part = shared->next.fetch_add(1); part < shared->parts; part = shared->next.fetch_add(1)) {
        (*run)(*shared, part);
      }
    });
  }
  run_part(*shared, 0);
  for (size_t part = shared->next.fetch_add(1); part < parts; part = shared->next.fetch_add(1)) {
    run_part(*shared, part);
  }
  std::unique_lock lock(shared->mutex);
  shared->finished_cv.wait(lock, [&] { return shared->finished == parts; });
  if (shared->error) std::rethrow_exception(shared->error);
}

// f(thread, task) for every task in [0, tasks), tasks taken in order by
// whichever thread is free (balances partitions of skewed size).
template <class F>
void parallel_tasks(int threads, size_t tasks, F&& f) {
  std::atomic<size_t> next{0};
  const int used = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), tasks));
  parallel_for(used, static_cast<size_t>(std::max(used, 1)), [&](int t, size_t, size_t) {
    for (size_t task = next.fetch_add(1); task < tasks; task = next.fetch_add(1)) {
      check_cancel_point();
      f(t, task);
    }
  });
}

// Sizes an array to n elements (as resize: new elements zero). The pages of
// a large fresh array not yet in memory (common/prefault.hpp's megabyte
// pieces; a warm run's arrays come from the retained heap, already there)
// are faulted in by several cores first: a million groups' 8 MB is 2,048
// page faults, about 6 ms on one core of a virtualized GPU host, and the
// zeroing then runs over resident pages. Each piece looks at the
// statement's cancel token first: a held side of millions of rows takes
// hundreds of milliseconds to fault in on a VM.
template <class T, class Allocator>
void resize_prefaulted(std::vector<T, Allocator>& v, size_t n) {
  static_assert(std::is_trivially_copyable_v<T>);
  constexpr size_t min_bytes = size_t{2} << 20;
  const size_t bytes = n * sizeof(T);
  if (n > v.capacity() && bytes >= min_bytes) {
    v.reserve(n);
    // Writes into the new capacity only to fault its pages in; resize()
    // below gives the elements their values.
    auto* first = reinterpret_cast<unsigned char*>(v.data()) + v.size() * sizeof(T);
    std::vector<MemoryPiece> pieces;
    add_unfaulted_pieces(first, bytes - v.size() * sizeof(T), pieces);
    const int threads = static_cast<int>(std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), pieces.size()));
    parallel_for(threads, pieces.size(), [&](int, size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        check_cancel_point();
        std::memset(pieces[i].first, 0, pieces[i].second);
      }
    });
  }
  v.resize(n);
}

}  // namespace tally::executor::cpu
