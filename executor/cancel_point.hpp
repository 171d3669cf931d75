#pragma once
// PostgreSQL's CHECK_FOR_INTERRUPTS for code that has no ExecContext at hand
// (accumulators, sort comparators, result encoding): run_select installs the
// statement's cancel token for its thread, and long loops tick a
// CancelTicker, which looks at the token every kCancelStride calls, so that a
// cancel or statement_timeout stops them within milliseconds at the cost of
// an increment per row.
#include <cstdint>

#include "common/cancel.hpp"

namespace tally::executor {

// Calls between two looks at the token: 64k rows take well under a
// millisecond in every loop that ticks.
constexpr uint32_t kCancelStride = 1u << 16;

namespace detail {
inline thread_local const CancelToken* current_cancel_token = nullptr;
}  // namespace detail

// Installs a token for this thread while it lives (null: none); nests. The
// CPU engine's fork-join helpers install the caller's token in their tasks.
class CancelScope {
 public:
  explicit CancelScope(const CancelToken* token) : previous_(detail::current_cancel_token) {
    detail::current_cancel_token = token;
  }
  ~CancelScope() { detail::current_cancel_token = previous_; }
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const CancelToken* previous_;
};

// The token this thread's statement runs under (null: none).
inline const CancelToken* current_cancel_token() { return detail::current_cancel_token; }

// Throws the pending cancellation of this thread's statement, if any.
inline void check_cancel_point() {
  if (const CancelToken* token = detail::current_cancel_token) token->check();
}

class CancelTicker {
 public:
  void tick() {
    if ((++calls_ & (kCancelStride - 1)) == 0) check_cancel_point();
  }

 private:
  uint32_t calls_ = 0;
};

// A tick of the calling thread's own count, for sort comparators: std::sort
// copies its comparator into every recursive call, so a CancelTicker held
// by the comparator restarts in each small partition and a long sort's
// last phase would never look at the token.
inline void tick_on_this_thread() {
  thread_local CancelTicker ticker;
  ticker.tick();
}

}  // namespace tally::executor
