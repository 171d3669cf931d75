#include "server/session_registry.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "common/log.hpp"
#include "protocol/scram.hpp"
#include "server/metrics.hpp"

namespace tally::server {

protocol::BackendKey SessionRegistry::register_session(CancelToken& token, bool superuser) {
  // The secret must be unguessable (it authorizes cancelling); random bytes.
  std::string random = protocol::random_bytes(4);
  int32_t secret = static_cast<int32_t>((uint32_t(uint8_t(random[0])) << 24) |
                                        (uint32_t(uint8_t(random[1])) << 16) |
                                        (uint32_t(uint8_t(random[2])) << 8) |
                                        uint32_t(uint8_t(random[3])));
  std::lock_guard lock(mutex_);
  // The check and the insertion under one lock: concurrent logins cannot
  // overshoot the limit.
  const size_t max = static_cast<size_t>(std::max(0, max_connections_.load()));
  const size_t reserved = std::min(max, static_cast<size_t>(std::max(0, superuser_reserved_.load())));
  if (sessions_.size() >= max) {
    throw Error(SqlState::too_many_connections, "sorry, too many clients already", Severity::fatal);
  }
  if (!superuser && sessions_.size() >= max - reserved) {
    throw Error(SqlState::too_many_connections,
                "remaining connection slots are reserved for non-replication superuser connections",
                Severity::fatal);
  }
  if (next_process_id_ == 0) {
    // Start near the real pid so ids from two servers on one host rarely collide in logs.
    next_process_id_ = static_cast<int32_t>(::getpid()) * 16;
  }
  int32_t pid = 0;
  do {
    pid = next_process_id_++;
    if (next_process_id_ <= 0) next_process_id_ = 1;  // stay positive, like real pids
  } while (pid <= 0 || sessions_.count(pid) > 0);
  sessions_[pid] = Entry{secret, &token, superuser, {}, {}};
  return protocol::BackendKey{pid, secret};
}

void SessionRegistry::unregister_session(const protocol::BackendKey& key) {
  std::lock_guard lock(mutex_);
  sessions_.erase(key.process_id);
}

void SessionRegistry::set_session_user(const protocol::BackendKey& key, const std::string& user) {
  std::lock_guard lock(mutex_);
  if (auto it = sessions_.find(key.process_id); it != sessions_.end()) {
    it->second.user = user;
    it->second.activity.user = user;
  }
}

namespace {

constexpr size_t kActivityQueryBytes = 1024;

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void SessionRegistry::session_started(const protocol::BackendKey& key, const std::string& database,
                                      const std::string& application_name, const std::string& client_addr) {
  const int64_t now = now_us();
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(key.process_id);
  if (it == sessions_.end()) return;
  BackendActivity& a = it->second.activity;
  a.pid = key.process_id;
  a.database = database;
  a.application_name = application_name;
  a.client_addr = client_addr;
  a.backend_start_us = now;
  a.state_change_us = now;
  a.state = "idle";
}

void SessionRegistry::statement_started(const protocol::BackendKey& key, const std::string& query) {
  const int64_t now = now_us();
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(key.process_id);
  if (it == sessions_.end()) return;
  BackendActivity& a = it->second.activity;
  // A statement outside a transaction block starts its own transaction.
  if (a.xact_start_us == 0) a.xact_start_us = now;
  a.query_start_us = now;
  a.state_change_us = now;
  a.state = "active";
  // PostgreSQL's track_activity_query_size: a statement's first 1024 bytes,
  // cut at a character's start (a multi-megabyte INSERT is not copied whole).
  size_t keep = std::min(query.size(), kActivityQueryBytes);
  while (keep > 0 && keep < query.size() && (static_cast<unsigned char>(query[keep]) & 0xC0) == 0x80) --keep;
  a.query.assign(query, 0, keep);
}

void SessionRegistry::session_idle(const protocol::BackendKey& key, TransactionStatus status) {
  const int64_t now = now_us();
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(key.process_id);
  if (it == sessions_.end()) return;
  BackendActivity& a = it->second.activity;
  a.state = status == TransactionStatus::idle       ? "idle"
            : status == TransactionStatus::in_block ? "idle in transaction"
                                                    : "idle in transaction (aborted)";
  if (status == TransactionStatus::idle) a.xact_start_us = 0;
  a.state_change_us = now;
}

std::vector<BackendActivity> SessionRegistry::activity() const {
  std::lock_guard lock(mutex_);
  std::vector<BackendActivity> out;
  out.reserve(sessions_.size());
  for (const auto& [pid, entry] : sessions_) {
    if (entry.activity.pid != 0) out.push_back(entry.activity);
  }
  std::sort(out.begin(), out.end(), [](const BackendActivity& a, const BackendActivity& b) { return a.pid < b.pid; });
  return out;
}

SignalOutcome SessionRegistry::signal(int32_t caller_pid, int32_t target_pid, CancelReason reason) {
  std::lock_guard lock(mutex_);
  auto target = sessions_.find(target_pid);
  if (target == sessions_.end()) return SignalOutcome::no_such_backend;
  auto caller = sessions_.find(caller_pid);
  const bool caller_superuser = caller != sessions_.end() && caller->second.superuser;
  if (!caller_superuser) {
    if (target->second.superuser) return SignalOutcome::superuser_only;
    if (caller == sessions_.end() || caller->second.user != target->second.user) return SignalOutcome::not_permitted;
  }
  // Never downgrade a pending termination to a plain cancel.
  if (target->second.token->reason() != CancelReason::shutdown) target->second.token->request(reason);
  return SignalOutcome::sent;
}

void SessionRegistry::cancel(const protocol::BackendKey& key) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(key.process_id);
  if (it == sessions_.end() || it->second.secret_key != key.secret_key) return;
  // Never downgrade a pending shutdown to a plain cancel.
  if (it->second.token->reason() != CancelReason::shutdown) {
    it->second.token->request(CancelReason::user_request);
  }
}

void SessionRegistry::connection_opened() {
  connections_.fetch_add(1);
  metrics::connections_total().inc();
  metrics::connections_active().inc();
}

void SessionRegistry::connection_closed() {
  connections_.fetch_sub(1);
  metrics::connections_active().dec();
}

void SessionRegistry::connection_refused(const Error&) {
  metrics::connections_refused_total().inc();
}

void SessionRegistry::statement_finished(const Error* error) {
  // The outcome counters are looked up once: the registry lookup takes a lock.
  static metrics::Counter& ok = metrics::queries_total(metrics::QueryOutcome::ok);
  static metrics::Counter& failed = metrics::queries_total(metrics::QueryOutcome::error);
  static metrics::Counter& cancelled = metrics::queries_total(metrics::QueryOutcome::cancelled);
  static metrics::Counter& timeout = metrics::queries_total(metrics::QueryOutcome::timeout);
  if (error == nullptr) {
    ok.inc();
  } else if (error->state() == SqlState::query_canceled) {
    std::string_view message = error->what();
    (message.find("statement timeout") != std::string_view::npos ? timeout : cancelled).inc();
  } else {
    failed.inc();
  }
}

void SessionRegistry::set_statement_deadline(
    CancelToken& token, std::optional<std::chrono::steady_clock::time_point> deadline) {
  if (deadline) {
    timer_.arm(token, *deadline);
  } else {
    timer_.disarm(token);
  }
}

size_t SessionRegistry::sessions() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

void SessionRegistry::cancel_all_for_shutdown() {
  std::lock_guard lock(mutex_);
  for (auto& [pid, entry] : sessions_) entry.token->request(CancelReason::shutdown);
}

bool SessionRegistry::wants_statement_timeline() { return log::enabled(log::Level::debug); }

void SessionRegistry::statement_timeline(int32_t process_id, const StatementTimeline& timeline) {
  using P = StatementTimeline;
  log::debug("statement_timeline",
             {{"pid", process_id},
              {"parsed_us", timeline.offset_us(P::parsed)},
              {"analyzed_us", timeline.offset_us(P::analyzed)},
              {"executor_start_us", timeline.offset_us(P::executor_start)},
              {"executor_end_us", timeline.offset_us(P::executor_end)},
              {"table_created_us", timeline.offset_us(P::table_created)},
              {"rows_written_us", timeline.offset_us(P::rows_written)},
              {"files_synced_us", timeline.offset_us(P::files_synced)},
              {"committed_us", timeline.offset_us(P::committed)},
              {"result_ready_us", timeline.offset_us(P::result_ready)},
              {"first_data_row_us", timeline.offset_us(P::first_data_row)},
              {"statement_done_us", timeline.offset_us(P::statement_done)},
              {"ready_for_query_us", timeline.offset_us(P::ready_for_query)}});
}

}  // namespace tally::server
