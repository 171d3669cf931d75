#include "server/statement_timer.hpp"

#include <algorithm>

namespace tally::server {

StatementTimer::StatementTimer() : thread_([this] { loop(); }) {}

StatementTimer::~StatementTimer() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void StatementTimer::arm(CancelToken& token, Clock::time_point deadline) {
  bool earlier = false;
  {
    std::lock_guard lock(mutex_);
    deadlines_[&token] = deadline;
    earlier = deadline < wakes_at_;
  }
  // Sessions arm once per statement, nearly always later than the deadline
  // the thread sleeps towards: waking it then would cost a context switch
  // per statement for nothing.
  if (earlier) changed_.notify_all();
}

void StatementTimer::disarm(CancelToken& token) {
  std::lock_guard lock(mutex_);
  deadlines_.erase(&token);
}

void StatementTimer::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (deadlines_.empty()) {
      wakes_at_ = Clock::time_point::max();
      changed_.wait(lock);
      continue;
    }
    auto earliest = std::min_element(deadlines_.begin(), deadlines_.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    // A copy: disarm() may erase the entry while the lock is released in wait_until.
    Clock::time_point deadline = earliest->second;
    if (Clock::now() < deadline) {
      wakes_at_ = deadline;
      changed_.wait_until(lock, deadline);
      continue;
    }
    // Never turn a pending shutdown or user cancel into a timeout.
    if (!earliest->first->requested()) earliest->first->request(CancelReason::statement_timeout);
    deadlines_.erase(earliest);
  }
}

}  // namespace tally::server
