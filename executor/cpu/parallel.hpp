#pragma once
// Fork-join helpers of the CPU engine: a static split of a row range over
// threads (each thread's part is contiguous, so two calls with the same
// arguments give every thread the same rows), and a dynamic task loop for
// work of uneven size (radix partitions). The first exception a worker throws
// is rethrown on the calling thread after every worker has joined.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tally::executor::cpu {

// f(thread, begin, end) over [0, n) split into `threads` contiguous parts.
template <class F>
void parallel_for(int threads, size_t n, F&& f) {
  if (threads <= 1 || n < 2) {
    f(0, size_t{0}, n);
    return;
  }
  std::vector<std::thread> workers;
  std::exception_ptr error;
  std::mutex error_mutex;
  const size_t per = (n + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  for (int t = 0; t < threads; ++t) {
    const size_t begin = static_cast<size_t>(t) * per, end = std::min(n, begin + per);
    if (begin >= end) break;
    workers.emplace_back([&, t, begin, end] {
      try {
        f(t, begin, end);
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto& w : workers) w.join();
  if (error) std::rethrow_exception(error);
}

// f(thread, task) for every task in [0, tasks), tasks taken in order by
// whichever thread is free (balances partitions of skewed size).
template <class F>
void parallel_tasks(int threads, size_t tasks, F&& f) {
  std::atomic<size_t> next{0};
  const int used = static_cast<int>(std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), tasks));
  parallel_for(used, static_cast<size_t>(std::max(used, 1)), [&](int t, size_t, size_t) {
    for (size_t task = next.fetch_add(1); task < tasks; task = next.fetch_add(1)) f(t, task);
  });
}

}  // namespace tally::executor::cpu
