#pragma once
// pg_stat_activity: what every session of the process is doing. The server's
// session registry keeps it and installs itself for the process's life (as
// backend_signals.hpp's signaller: one registry per server, and a catalog
// relation has no other way to reach it).
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace tally {

// One session, as pg_stat_activity shows a client backend. Times are
// microseconds since the Unix epoch; 0 where there is none.
struct BackendActivity {
  int32_t pid = 0;
  std::string database, user, application_name;
  std::string client_addr;  // empty: a local (Unix-socket) client
  int64_t backend_start_us = 0;
  int64_t xact_start_us = 0;   // the open transaction's first statement
  int64_t query_start_us = 0;  // the last statement's start
  int64_t state_change_us = 0;
  // "active", "idle", "idle in transaction" or "idle in transaction (aborted)".
  std::string state;
  std::string query;  // the last statement's text
};

class BackendActivitySource {
 public:
  virtual ~BackendActivitySource() = default;
  virtual std::vector<BackendActivity> activity() const = 0;
};

namespace detail {
inline std::atomic<const BackendActivitySource*> backend_activity_source{nullptr};
}  // namespace detail

// Installs (or, with nullptr, removes) the process's source.
inline void install_backend_activity_source(const BackendActivitySource* source) {
  detail::backend_activity_source.store(source);
}
// The installed source; nullptr when none (a session without a server).
inline const BackendActivitySource* backend_activity_source() { return detail::backend_activity_source.load(); }
// The sessions of the process; none without a server (an embedded session).
inline std::vector<BackendActivity> backend_activity() {
  const BackendActivitySource* source = backend_activity_source();
  return source != nullptr ? source->activity() : std::vector<BackendActivity>{};
}

}  // namespace tally
