#include "server/busy_poll.hpp"

#include <algorithm>
#include <thread>

#include "server/metrics.hpp"

namespace tally::server {

BusyPoll::BusyPoll(std::chrono::microseconds window, unsigned max_active)
    : window_(std::max(window, std::chrono::microseconds(0))),
      max_active_(max_active > 0 ? max_active
                                 : std::max(1u, std::thread::hardware_concurrency() / 2)) {}

void BusyPoll::count_spin(bool hit) {
  static metrics::Counter& hits = metrics::busy_polls_total(true);
  static metrics::Counter& misses = metrics::busy_polls_total(false);
  (hit ? hits : misses).inc();
}

}  // namespace tally::server
