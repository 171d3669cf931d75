#include "server/busy_poll.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "server/metrics.hpp"

namespace tally::server {

namespace {
// How old the host load sample may be: builds start and stop over seconds,
// and reading /proc/loadavg costs ~10 us.
constexpr std::chrono::milliseconds kHostSampleInterval{20};
}  // namespace

BusyPoll::BusyPoll(std::chrono::microseconds window, unsigned max_open)
    : window_(std::max(window, std::chrono::microseconds(0))),
      max_open_(max_open > 0 ? max_open : std::max(1u, std::thread::hardware_concurrency() / 2)),
      hardware_threads_(std::max(1u, std::thread::hardware_concurrency())) {}

int BusyPoll::host_running_tasks() {
  // "0.52 0.58 0.59 3/467 12345": the fourth field is running/total now,
  // the reading thread included.
  int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[128];
  ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return -1;
  text[got] = '\0';
  const char* p = text;
  for (int field = 0; field < 3; ++field) {
    while (*p != '\0' && *p != ' ') ++p;
    while (*p == ' ') ++p;
  }
  char* end = nullptr;
  long running = std::strtol(p, &end, 10);
  if (end == p || *end != '/') return -1;
  return static_cast<int>(running);
}

bool BusyPoll::host_has_idle_core() {
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t next = next_sample_ns_.load(std::memory_order_relaxed);
  // One session samples; the others use its answer.
  if (now >= next &&
      next_sample_ns_.compare_exchange_strong(
          next, now + std::chrono::nanoseconds(kHostSampleInterval).count(),
          std::memory_order_relaxed)) {
    const bool busy = host_running_tasks() > static_cast<int>(hardware_threads_);
    if (busy) host_busy_samples_.fetch_add(1, std::memory_order_relaxed);
    host_busy_.store(busy, std::memory_order_relaxed);
  }
  return !host_busy_.load(std::memory_order_relaxed);
}

void BusyPoll::count_spin(bool hit) {
  static metrics::Counter& hits = metrics::busy_polls_total(true);
  static metrics::Counter& misses = metrics::busy_polls_total(false);
  (hit ? hits : misses).inc();
}

}  // namespace tally::server
