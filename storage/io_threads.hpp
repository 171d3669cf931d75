#pragma once
// Threads kept for the life of the process to wait on the storage device:
// a commit's fsyncs run side by side on them. Starting and joining a thread
// per file took about as long as the fsync itself (50-70 us each on the
// development VM, where a small file's fdatasync takes about 280 us), and a
// small commit syncs four or five files and directories.
#include <cstddef>
#include <functional>
#include <memory>

namespace tally::storage {

// Tasks task(0) .. task(n - 1) started on up to 15 kept threads (they wait
// on the device, not the CPU: more of them than cores is fine) while the
// caller goes on; wait() runs what no thread has taken yet on the caller's
// thread, returns once every task has run and rethrows the first exception
// a task threw. The destructor waits too (and swallows the exception), so
// nothing a task uses goes away while it runs.
class IoTasks {
 public:
  IoTasks(size_t n, std::function<void(size_t)> task);
  ~IoTasks();
  IoTasks(const IoTasks&) = delete;
  IoTasks& operator=(const IoTasks&) = delete;
  void wait();

  struct Batch;

 private:
  std::unique_ptr<Batch> batch_;
  bool waited_ = false;
};

// IoTasks(n, task).wait(): every task run, on the calling thread and kept ones.
void run_io_tasks(size_t n, const std::function<void(size_t)>& task);

}  // namespace tally::storage
