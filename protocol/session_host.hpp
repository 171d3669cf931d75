#pragma once
// What a ProtocolSession needs from the server that runs it: backend keys for
// CancelRequest, cancellation of another session, and the session limit.
// The server implements it (server/session_registry.hpp); tests use a fake.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/cancel.hpp"
#include "common/error.hpp"
#include "common/query_handler.hpp"
#include "common/statement_timeline.hpp"

namespace tally::protocol {

struct BackendKey {
  int32_t process_id = 0;
  int32_t secret_key = 0;
  bool operator==(const BackendKey&) const = default;
};

class SessionHost {
 public:
  virtual ~SessionHost() = default;
  // Registers an authenticated session's cancel token under a fresh key,
  // which the session announces in BackendKeyData. Only authenticated
  // sessions hold max_connections slots, so connections that never finish
  // authenticating cannot lock others out. Throws FATAL 53300 when no slot
  // is left for this user (the last superuser_reserved_connections slots are
  // for superusers), as PostgreSQL does after authentication.
  virtual BackendKey register_session(CancelToken& token, bool superuser) = 0;
  virtual void unregister_session(const BackendKey& key) = 0;
  // The registered session's role, which pg_cancel_backend and
  // pg_terminate_backend compare with their caller's.
  virtual void set_session_user(const BackendKey& /*key*/, const std::string& /*user*/) {}
  // A CancelRequest: cancels the session with exactly this key, if any.
  virtual void cancel(const BackendKey& key) = 0;

  // What pg_stat_activity shows of the registered session: where it
  // connected from (client_addr empty for a Unix socket), then each
  // statement as it starts, and the transaction state at each ReadyForQuery.
  virtual void session_started(const BackendKey& /*key*/, const std::string& /*database*/,
                               const std::string& /*application_name*/, const std::string& /*client_addr*/) {}
  virtual void statement_started(const BackendKey& /*key*/, const std::string& /*query*/) {}
  virtual void session_idle(const BackendKey& /*key*/, TransactionStatus /*status*/) {}

  // statement_timeout: from `deadline` on, the token is to be cancelled with
  // CancelReason::statement_timeout; nullopt disarms it (the statement ended).
  virtual void set_statement_deadline(
      CancelToken& /*token*/,
      std::optional<std::chrono::steady_clock::time_point> /*deadline*/) {}

  // Observations, for metrics. Startup ended with a FATAL error (refused
  // authentication, connection limit, unknown database):
  virtual void connection_refused(const Error& /*error*/) {}
  // A Query message or an Execute ended; error is null on success.
  virtual void statement_finished(const Error* /*error*/) {}
  // Whether the next statement keeps a StatementTimeline (asked once per
  // Query or Execute; off by default, so the stamps cost nothing).
  virtual bool wants_statement_timeline() { return false; }
  // A statement's timeline, once its ReadyForQuery was flushed (extended
  // protocol: at the Sync after the Execute).
  virtual void statement_timeline(int32_t /*process_id*/, const StatementTimeline& /*timeline*/) {}
};

}  // namespace tally::protocol
