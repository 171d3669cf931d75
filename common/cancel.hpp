#pragma once
// Cooperative cancellation of a running statement. The session owns one token;
// CancelRequest, statement_timeout and shutdown set a reason from other threads,
// and long-running loops (scans, aggregation, result streaming) call check()
// between chunks so that a cancelled query stops promptly with the right SQLSTATE.
#include <atomic>

#include "common/error.hpp"

namespace tally {

enum class CancelReason : int { none = 0, user_request = 1, statement_timeout = 2, shutdown = 3 };

class CancelToken {
 public:
  void request(CancelReason reason) { reason_.store(static_cast<int>(reason)); }
  void reset() { reason_.store(0); }
  CancelReason reason() const { return static_cast<CancelReason>(reason_.load()); }
  bool requested() const { return reason_.load(std::memory_order_relaxed) != 0; }

  // Throws the PostgreSQL error for the pending cancellation, if any.
  void check() const {
    switch (reason()) {
      case CancelReason::none: return;
      case CancelReason::user_request:
        throw Error(SqlState::query_canceled, "canceling statement due to user request");
      case CancelReason::statement_timeout:
        throw Error(SqlState::query_canceled, "canceling statement due to statement timeout");
      case CancelReason::shutdown:
        throw Error(SqlState::admin_shutdown,
                    "terminating connection due to administrator command", Severity::fatal);
    }
  }

 private:
  std::atomic<int> reason_{0};
};

}  // namespace tally
