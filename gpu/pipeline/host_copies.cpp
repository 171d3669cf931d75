// Parallel host copies (host_copies.hpp).
#include "gpu/pipeline/host_copies.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tally::gpu {
namespace {

// Pieces small enough that a 4 MB column spreads over every thread, large
// enough that taking one costs nothing beside its copy.
constexpr size_t kPieceBytes = size_t{512} << 10;
// Below this one memcpy on the caller's thread is as fast.
constexpr size_t kParallelBytes = size_t{1} << 20;
constexpr unsigned kMaxThreads = 8;

struct Piece {
  char* to;
  const char* from;
  size_t bytes;
};

struct Job {
  std::vector<Piece> pieces;
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::mutex mutex;
  std::condition_variable finished;

  // Copies pieces until none is left to take; true when this call copied the last one.
  bool work() {
    size_t copied = 0;
    for (size_t i = next.fetch_add(1); i < pieces.size(); i = next.fetch_add(1)) {
      std::memcpy(pieces[i].to, pieces[i].from, pieces[i].bytes);
      ++copied;
    }
    if (copied == 0) return false;
    if (done.fetch_add(copied) + copied != pieces.size()) return false;
    std::lock_guard lock(mutex);
    finished.notify_all();
    return true;
  }
};

class CopyThreads {
 public:
  explicit CopyThreads(unsigned helpers) {
    for (unsigned t = 0; t < helpers; ++t) std::thread([this] { serve(); }).detach();
  }

  void run(const std::shared_ptr<Job>& job) {
    {
      std::lock_guard lock(mutex_);
      jobs_.push_back(job);
    }
    wake_.notify_all();
    job->work();
    std::unique_lock lock(job->mutex);
    job->finished.wait(lock, [&] { return job->done.load() == job->pieces.size(); });
  }

 private:
  void serve() {
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return !jobs_.empty(); });
        job = jobs_.front();
        // Every piece taken: the next helper looks at the next job.
        if (job->next.load() >= job->pieces.size()) {
          jobs_.pop_front();
          continue;
        }
      }
      job->work();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> jobs_;
};

CopyThreads& copy_threads() {
  // Never destroyed: its detached threads may still wait on it at exit.
  static CopyThreads* threads = new CopyThreads(
      std::max(1u, std::min(kMaxThreads, std::thread::hardware_concurrency() / 2)) - 1);
  return *threads;
}

}  // namespace

void copy_host_ranges(std::span<const HostRange> ranges) {
  size_t total = 0;
  for (const HostRange& r : ranges) total += r.bytes;
  if (total < kParallelBytes) {
    for (const HostRange& r : ranges)
      if (r.bytes > 0) std::memcpy(r.to, r.from, r.bytes);
    return;
  }
  auto job = std::make_shared<Job>();
  for (const HostRange& r : ranges) {
    for (size_t at = 0; at < r.bytes; at += kPieceBytes) {
      job->pieces.push_back(Piece{static_cast<char*>(r.to) + at, static_cast<const char*>(r.from) + at,
                                  std::min(kPieceBytes, r.bytes - at)});
    }
  }
  copy_threads().run(job);
}

}  // namespace tally::gpu
