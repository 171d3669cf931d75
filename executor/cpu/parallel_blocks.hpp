#pragma once
// Runs f(begin, end) over [0, n) in blocks on the shared worker pool and the
// calling thread, and returns when every block is done. For column-at-a-time
// loops whose rows are independent (building a result column of a million
// groups took longer than the aggregation that found them). f must not throw.
// A helper that starts after the caller has finished finds nothing to do and
// never calls f, so f may refer to the caller's locals.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>

#include "executor/cpu/worker_pool.hpp"

namespace tally::executor::cpu {

template <class F>
void parallel_blocks(size_t n, size_t block_rows, F&& f) {
  WorkerPool& pool = WorkerPool::shared();
  const size_t blocks = block_rows == 0 ? 0 : (n + block_rows - 1) / block_rows;
  if (blocks <= 1 || pool.workers() == 0) {
    if (n > 0) f(size_t{0}, n);
    return;
  }
  struct Job {
    std::atomic<size_t> next{0};
    std::mutex mutex;
    std::condition_variable idle;
    int active = 0;
    bool closed = false;
  };
  auto job = std::make_shared<Job>();
  auto work = [&f, n, block_rows, blocks](Job& j) {
    for (size_t b = j.next.fetch_add(1); b < blocks; b = j.next.fetch_add(1)) {
      const size_t begin = b * block_rows;
      f(begin, std::min(n, begin + block_rows));
    }
  };
  const size_t helpers = std::min(static_cast<size_t>(pool.workers()), blocks - 1);
  for (size_t h = 0; h < helpers; ++h) {
    pool.submit([job, &work] {
      {
        std::lock_guard lock(job->mutex);
        if (job->closed) return;
        ++job->active;
      }
      work(*job);
      std::lock_guard lock(job->mutex);
      if (--job->active == 0) job->idle.notify_all();
    });
  }
  work(*job);
  std::unique_lock lock(job->mutex);
  job->closed = true;
  job->idle.wait(lock, [&] { return job->active == 0; });
}

}  // namespace tally::executor::cpu
