#pragma once
// A process-wide pool of long-lived worker threads for work that is split
// per query but too short to pay for starting threads each time (encoding a
// 65,536-row result on 16 cores takes about as long as starting 15 threads).
// Tasks run in submission order on whichever worker is free; a task must not
// throw (catch inside and hand the error to whoever waits for it). Callers
// never depend on a task starting: a busy pool only makes them do more of the
// work themselves (see stream_rows), so one slow query cannot stall another.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "common/thread_name.hpp"

namespace tally::executor::cpu {

class WorkerPool {
 public:
  // More workers than this gain nothing on the hosts we measured: with 15
  // helpers a 16-core host encodes 65,536 rows far faster than one socket
  // write takes them.
  static constexpr int kMaxWorkers = 15;

  // The shared pool: hardware threads - 1 workers (the caller is the other
  // one), at most kMaxWorkers; started on first use and never stopped (the
  // threads end with the process; the pool is leaked so that no static
  // destructor waits for them).
  static WorkerPool& shared() {
    static WorkerPool* pool = [] {
      const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
      return new WorkerPool(std::min(kMaxWorkers, hardware - 1));
    }();
    return *pool;
  }

  // Number of worker threads (0 on a one-core host: callers run everything inline).
  int workers() const { return workers_; }

  void submit(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

 private:
  explicit WorkerPool(int workers) : workers_(std::max(0, workers)) {
    for (int i = 0; i < workers_; ++i) {
      std::thread([this] {
        name_this_thread("tally-cpu-work");
        while (true) {
          std::function<void()> task;
          {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [&] { return !tasks_.empty(); });
            task = std::move(tasks_.front());
            tasks_.pop_front();
          }
          task();
        }
      }).detach();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  int workers_;
};

}  // namespace tally::executor::cpu
