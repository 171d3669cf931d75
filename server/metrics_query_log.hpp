#pragma once
// tallyd's per-connection and per-statement observations, as a decorator of
// the executor's QueryHandlerFactory (protocol/query_handler.hpp), so neither
// protocol/ nor executor/ knows about logs or metrics:
//   - one "connection" line when a session starts (user, database, pid,
//     application_name) and one "disconnection" line when it ends (duration,
//     statements run);
//   - one "query" line per Simple Query message and per Execute (duration,
//     command, engine and variant of the aggregation that ran, rows and bytes
//     scanned), and one "query_failed" line with the SQLSTATE when it fails;
//   - the tally_query_duration_seconds{engine} histogram.
// The statement text may hold row data (INSERT ... VALUES) or a password, so it
// is logged only at debug level (truncated); info lines carry the command word.
// Engine, variant and the scan figures come from common/engine_counters.hpp's
// StatementTrace, which the session thread's scan and aggregation fill.
//
//   server::QueryLogFactory logged(database->handler_factory());
//   server::Server listener(config_source, logged);
#include <memory>
#include <string>
#include <string_view>

#include "protocol/query_handler.hpp"

namespace tally::server {

class QueryLogFactory final : public protocol::QueryHandlerFactory {
 public:
  // `inner` must outlive this factory and every handler it creates.
  explicit QueryLogFactory(protocol::QueryHandlerFactory& inner) : inner_(inner) {}
  std::unique_ptr<protocol::QueryHandler> create(const protocol::SessionInfo& session) override;

 private:
  protocol::QueryHandlerFactory& inner_;
};

// "select k, sum(v) ..." -> "SELECT"; "" for an empty statement. Leading
// whitespace, comments and parentheses are skipped (what psql's log shows as
// the command is the first keyword).
std::string command_word(std::string_view sql);

// Longest statement text a debug line carries.
constexpr size_t max_logged_statement_chars = 1024;

}  // namespace tally::server
