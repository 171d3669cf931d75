#include "storage/io_threads.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "common/thread_name.hpp"

namespace tally::storage {
namespace {

constexpr size_t kMaxThreads = 15;

// One call's tasks. Lives on the caller's stack: the caller returns only
// once no thread is inside it (`users`) and every task has run.
struct Batch {
  const std::function<void(size_t)>* task = nullptr;
  size_t n = 0;
  std::atomic<size_t> next{0};
  size_t done = 0;   // under the pool's mutex, as the two below
  size_t users = 0;  // kept threads running its tasks now
  std::exception_ptr failure;
};

class IoThreads {
 public:
  void run(size_t n, const std::function<void(size_t)>& task) {
    Batch batch;
    batch.task = &task;
    batch.n = n;
    {
      std::lock_guard lock(mutex_);
      while (threads_ < std::min(n - 1, kMaxThreads)) {
        std::thread(&IoThreads::serve, this).detach();
        ++threads_;
      }
      queue_.push_back(&batch);
    }
    wake_.notify_all();
    drain(batch);
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return batch.done == batch.n && batch.users == 0; });
    queue_.erase(std::remove(queue_.begin(), queue_.end(), &batch), queue_.end());
    if (batch.failure) std::rethrow_exception(batch.failure);
  }

 private:
  void drain(Batch& batch) {
    for (size_t i; (i = batch.next.fetch_add(1)) < batch.n;) {
      std::exception_ptr failure;
      try {
        (*batch.task)(i);
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard lock(mutex_);
      if (failure && !batch.failure) batch.failure = failure;
      if (++batch.done == batch.n) finished_.notify_all();
    }
  }

  void serve() {
    name_this_thread("tally-io");
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return !queue_.empty(); });
      Batch* batch = queue_.front();
      if (batch->next.load() >= batch->n) {  // every task taken: nothing left here
        queue_.pop_front();
        continue;
      }
      ++batch->users;
      lock.unlock();
      drain(*batch);
      lock.lock();
      if (--batch->users == 0 && batch->done == batch->n) finished_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::deque<Batch*> queue_;
  size_t threads_ = 0;
};

}  // namespace

void run_io_tasks(size_t n, const std::function<void(size_t)>& task) {
  if (n == 0) return;
  if (n == 1) {
    task(0);
    return;
  }
  // Never destroyed: its threads wait on it until the process ends.
  static IoThreads* const pool = new IoThreads;
  pool->run(n, task);
}

}  // namespace tally::storage
