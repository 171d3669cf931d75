#pragma once
// The server's SessionHost: backend keys of live sessions for CancelRequest,
// and the connection count behind max_connections. Thread-safe: every session
// thread and every CancelRequest connection calls into it.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/backend_activity.hpp"
#include "common/backend_signals.hpp"
#include "protocol/session_host.hpp"
#include "server/statement_timer.hpp"

namespace tally::server {

class SessionRegistry : public protocol::SessionHost, public BackendSignaller, public BackendActivitySource {
 public:
  SessionRegistry(int max_connections, int superuser_reserved)
      : max_connections_(max_connections), superuser_reserved_(superuser_reserved) {}
  // SIGHUP may change the limits; they apply to sessions registered afterwards.
  void set_limits(int max_connections, int superuser_reserved) {
    max_connections_ = max_connections;
    superuser_reserved_ = superuser_reserved;
  }

  protocol::BackendKey register_session(CancelToken& token, bool superuser) override;
  void unregister_session(const protocol::BackendKey& key) override;
  void set_session_user(const protocol::BackendKey& key, const std::string& user) override;
  // pg_cancel_backend / pg_terminate_backend (common/backend_signals.hpp).
  SignalOutcome signal(int32_t caller_pid, int32_t target_pid, CancelReason reason) override;
  // Cancels exactly the session whose (pid, secret) both match; a wrong
  // secret is ignored silently, as PostgreSQL does.
  void cancel(const protocol::BackendKey& key) override;
  // pg_stat_activity (common/backend_activity.hpp).
  void session_started(const protocol::BackendKey& key, const std::string& database,
                       const std::string& application_name, const std::string& client_addr) override;
  void statement_started(const protocol::BackendKey& key, const std::string& query) override;
  void session_idle(const protocol::BackendKey& key, TransactionStatus status) override;
  std::vector<BackendActivity> activity() const override;
  // tally_connections_refused_total and tally_queries_total{outcome}.
  void connection_refused(const Error& error) override;
  void statement_finished(const Error* error) override;
  // At log level debug: a "statement_timeline" line per statement, with each
  // point's microseconds after the message's receipt (-1: not reached).
  bool wants_statement_timeline() override;
  void statement_timeline(int32_t process_id, const StatementTimeline& timeline) override;
  void set_statement_deadline(
      CancelToken& token,
      std::optional<std::chrono::steady_clock::time_point> deadline) override;

  // Connections (accepted sockets, authenticated or not), kept by the server.
  // (tally_connections_total and tally_connections_active follow them.)
  void connection_opened();
  void connection_closed();
  int connections() const { return connections_.load(); }
  size_t sessions() const;
  // Shutdown: every registered session's statement stops with FATAL 57P01.
  void cancel_all_for_shutdown();

 private:
  struct Entry {
    int32_t secret_key;
    CancelToken* token;
    bool superuser = false;
    std::string user;
    BackendActivity activity;
  };
  std::atomic<int> max_connections_;
  std::atomic<int> superuser_reserved_;
  std::atomic<int> connections_{0};
  mutable std::mutex mutex_;
  std::unordered_map<int32_t, Entry> sessions_;
  int32_t next_process_id_ = 0;
  StatementTimer timer_;
};

}  // namespace tally::server
