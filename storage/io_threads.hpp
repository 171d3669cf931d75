#pragma once
// Threads kept for the life of the process to wait on the storage device:
// a commit's fsyncs run side by side on them. Starting and joining a thread
// per file took about as long as the fsync itself (50-70 us each on the
// development VM, where a small file's fdatasync takes about 280 us), and a
// small commit syncs four or five files and directories.
#include <cstddef>
#include <functional>

namespace tally::storage {

// Runs task(0) .. task(n - 1), on the calling thread and up to 15 kept
// threads (tasks wait on the device, not the CPU: more of them than cores
// is fine), and returns once every task has run; rethrows the first
// exception a task threw after all have run.
void run_io_tasks(size_t n, const std::function<void(size_t)>& task);

}  // namespace tally::storage
