#pragma once
// pg_cancel_backend and pg_terminate_backend: one session signals another of
// the same process. The executor calls it; the server's session registry
// implements it and installs itself for the process's life (there is one
// registry per server, and a SQL function has no other way to reach it).
#include <atomic>
#include <cstdint>

#include "common/cancel.hpp"

namespace tally {

enum class SignalOutcome {
  sent,
  no_such_backend,  // PostgreSQL: WARNING "PID n is not a PostgreSQL backend process", false
  superuser_only,   // the target is a superuser's session and the caller is not (42501)
  not_permitted,    // another role's session and the caller is not a superuser (42501)
};

class BackendSignaller {
 public:
  virtual ~BackendSignaller() = default;
  // Requests `reason` (user_request: cancel its statement; shutdown: end the
  // session) of session target_pid on behalf of session caller_pid, with
  // PostgreSQL's permission rules: a superuser may signal any session, any
  // other role only sessions of its own role that are not a superuser's.
  virtual SignalOutcome signal(int32_t caller_pid, int32_t target_pid, CancelReason reason) = 0;
};

namespace detail {
inline std::atomic<BackendSignaller*> backend_signaller{nullptr};
}  // namespace detail

// Installs (or, with nullptr, removes) the process's signaller.
inline void install_backend_signaller(BackendSignaller* signaller) { detail::backend_signaller.store(signaller); }
// The installed signaller; nullptr when none (a session without a server).
inline BackendSignaller* backend_signaller() { return detail::backend_signaller.load(); }

}  // namespace tally
