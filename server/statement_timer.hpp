#pragma once
// statement_timeout for every session of the server: one thread sleeping until
// the earliest armed deadline, then cancelling that session's statement
// (CancelReason::statement_timeout: 57014 "canceling statement due to
// statement timeout"). Arming and disarming are a map update under a lock;
// arming wakes the thread only when the new deadline is the earliest.
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "common/cancel.hpp"

namespace tally::server {

class StatementTimer {
 public:
  using Clock = std::chrono::steady_clock;

  StatementTimer();
  ~StatementTimer();
  StatementTimer(const StatementTimer&) = delete;
  StatementTimer& operator=(const StatementTimer&) = delete;

  // Replaces the token's deadline. After disarm() returns the timer never
  // touches the token again, so its owner may destroy it.
  void arm(CancelToken& token, Clock::time_point deadline);
  void disarm(CancelToken& token);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<CancelToken*, Clock::time_point> deadlines_;
  // The deadline the thread sleeps until (max: none); a later arm() needs no wake-up.
  Clock::time_point wakes_at_ = Clock::time_point::min();
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace tally::server
