#pragma once
// tallyd's per-connection and per-statement observations, as a decorator of
// the executor's QueryHandlerFactory (common/query_handler.hpp), so neither
// protocol/ nor executor/ knows about logs or metrics:
//   - one "connection" line when a session starts (user, database, pid,
//     application_name) and one "disconnection" line when it ends (duration,
//     statements run);
//   - one "query" line per Simple Query message and per Execute (duration,
//     command, engine and variant of the aggregation that ran, rows and bytes
//     scanned) for the statements log_statement selects (set_log_statement;
//     every statement at debug level), and one "query_failed" line with the
//     SQLSTATE whenever one fails;
//   - the tally_query_duration_seconds{engine} histogram.
// A statement that writes no line costs two clock reads and a few relaxed
// atomics here: no lock, no allocation (a line per statement would cost a
// `SELECT 1` round trip about a third of its time with several clients).
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

#include "config/config.hpp"
#include "common/query_handler.hpp"

namespace tally::server {

class QueryLogFactory final : public tally::QueryHandlerFactory {
 public:
  // `inner` must outlive this factory and every handler it creates.
  explicit QueryLogFactory(tally::QueryHandlerFactory& inner) : inner_(inner) {}
  std::unique_ptr<tally::QueryHandler> create(const tally::SessionInfo& session) override;

 private:
  tally::QueryHandlerFactory& inner_;
};

// Which statements get a "query" line at info level, process-wide (tallyd
// sets it from configuration at start and on SIGHUP). Before any call: all,
// the behaviour this decorator had before the setting existed.
void set_log_statement(config::LogStatement which);
config::LogStatement log_statement();

// "select k, sum(v) ..." -> "SELECT"; "" for an empty statement. Leading
// whitespace, comments and parentheses are skipped (what psql's log shows as
// the command is the first keyword).
std::string command_word(std::string_view sql);

// Longest statement text a debug line carries.
constexpr size_t max_logged_statement_chars = 1024;

}  // namespace tally::server
