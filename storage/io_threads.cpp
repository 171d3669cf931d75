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

// One IoTasks's tasks. Its owner destroys it only once no kept thread is
// inside it (`users`) and every task has run.
struct IoTasks::Batch {
  std::function<void(size_t)> task;
  size_t n = 0;
  std::atomic<size_t> next{0};
  size_t done = 0;   // under the pool's mutex, as the two below
  size_t users = 0;  // kept threads running its tasks now
  std::exception_ptr failure;
};

namespace {

constexpr size_t kMaxThreads = 15;

class IoThreads {
 public:
  using Batch = IoTasks::Batch;

  void start(Batch& batch) {
    {
      std::lock_guard lock(mutex_);
      while (threads_ < std::min(batch.n, kMaxThreads)) {
        std::thread(&IoThreads::serve, this).detach();
        ++threads_;
      }
      queue_.push_back(&batch);
    }
    wake_.notify_all();
  }

  void finish(Batch& batch) {
    drain(batch);
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return batch.done == batch.n && batch.users == 0; });
    queue_.erase(std::remove(queue_.begin(), queue_.end(), &batch), queue_.end());
  }

 private:
  void drain(Batch& batch) {
    for (size_t i; (i = batch.next.fetch_add(1)) < batch.n;) {
      std::exception_ptr failure;
      try {
        batch.task(i);
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

// Never destroyed: its threads wait on it until the process ends.
IoThreads& pool() {
  static IoThreads* const threads = new IoThreads;
  return *threads;
}

}  // namespace

IoTasks::IoTasks(size_t n, std::function<void(size_t)> task) : batch_(std::make_unique<Batch>()) {
  batch_->task = std::move(task);
  batch_->n = n;
  // One task runs on the caller at wait(): no thread is woken for it.
  if (n > 1) pool().start(*batch_);
}

IoTasks::~IoTasks() {
  if (waited_) return;
  try {
    wait();
  } catch (...) {
  }
}

void IoTasks::wait() {
  if (waited_) return;
  waited_ = true;
  if (batch_->n > 1) {
    pool().finish(*batch_);
  } else {
    for (size_t i = 0; i < batch_->n; ++i) batch_->task(i);
  }
  if (batch_->failure) std::rethrow_exception(batch_->failure);
}

void run_io_tasks(size_t n, const std::function<void(size_t)>& task) { IoTasks(n, task).wait(); }

}  // namespace tally::storage
