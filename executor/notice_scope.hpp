#pragma once
// Notices raised while expressions evaluate (pg_cancel_backend's WARNING for
// an unknown pid), which have no ResultWriter at hand: the session installs
// its statement's writer for its thread, as cancel_point.hpp installs the
// cancel token. On a thread without one (an engine's helper) a notice is
// dropped: notices never change an answer.
#include "common/error.hpp"
#include "common/query_handler.hpp"

namespace tally::executor {

namespace detail {
inline thread_local tally::ResultWriter* current_notice_writer = nullptr;
}  // namespace detail

// Installs a writer for this thread while it lives; nests.
class NoticeScope {
 public:
  explicit NoticeScope(tally::ResultWriter* writer) : previous_(detail::current_notice_writer) {
    detail::current_notice_writer = writer;
  }
  ~NoticeScope() { detail::current_notice_writer = previous_; }
  NoticeScope(const NoticeScope&) = delete;
  NoticeScope& operator=(const NoticeScope&) = delete;

 private:
  tally::ResultWriter* previous_;
};

// Sends a NoticeResponse (its severity is the Error's) for this thread's statement.
inline void raise_notice(const Error& notice) {
  if (tally::ResultWriter* writer = detail::current_notice_writer) writer->notice(notice);
}

}  // namespace tally::executor
