#pragma once
// Analyses of SELECTs over one table shared by every session of the process,
// and the statement history a restarted tallyd plans again before its clients
// ask (issue 6: a restarted tallyd's first GROUP BY text cost ~200-300 us of
// parse, binding and planning before its executor; the same text again ~25).
//
// An entry is a Session::Analyzed that is reusable_over_table, keyed by the
// statement text, its parameter types and the planning settings (every setting
// but a few that only the executor or the wire read, see
// planning_settings_fingerprint). A session that has not analyzed a text takes
// the entry when its table's current snapshot is the one the entry read (the
// same check as the session's own analysis cache), so an INSERT, COPY,
// TRUNCATE, DROP or CREATE in between makes it analyze afresh, exactly as
// without this cache. The entries' texts, settings and use counts are the
// statement history (statement_history()), which tallyd keeps in its data
// directory and re-plans at start-up (replan_statement_history).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "executor/session.hpp"

namespace tally::executor {

class Database;

// One statement of the history: its text, the planning settings it was
// analyzed under ("name=value" lines), and how many statements ran with its
// analysis since it entered the history (a re-planned statement carries its
// recorded count on). The least used leave first: one-off texts (a new
// constant each time) push out each other, not the statements that repeat.
struct HistoryStatement {
  std::string sql;
  std::string settings;
  uint64_t uses = 0;
};

// The planning settings of a session as "name=value\n" lines (settings by
// lower-case name, as Settings::snapshot gives them), leaving out those that
// no analysis reads: the executor's knobs (tally.engine, tally.variant,
// tally.launch_config), timeouts, application_name and the
// transaction's isolation and read-only state.
std::string planning_settings_fingerprint(const std::map<std::string, std::string>& settings);

// The statements of the shared analyses, most used first. A statement whose analysis went stale stays in the
// history until it is pushed out.
std::vector<HistoryStatement> statement_history();

// A value that changes when the history (texts or counts) changes.
uint64_t statement_history_version();

// Releases the analyses whose table's current snapshot in `database` is not
// the one they read (their texts stay in the history): an analysis holds its
// table snapshot, and so the files a DROP or TRUNCATE retired.
void release_stale_shared_analyses(Database& database);

struct ReplanOutcome {
  size_t planned = 0;  // statements analyzed into the shared cache
  size_t failed = 0;   // statements that no longer analyze (table dropped, ...): skipped
  double micros = 0;
};

// A private session of `database` under a history statement's recorded
// planning settings (its user is the recorded session_authorization).
std::unique_ptr<Session> history_session(Database& database, const HistoryStatement& statement);
// Parses and analyzes `statement` in `session` into the shared analyses
// (adding `uses` to its count); false when it is not one statement whose
// analysis is reusable over its table (a SELECT over one table). Throws
// what the analysis throws (a dropped table, ...).
bool analyze_history_statement(Session& session, const HistoryStatement& statement, uint64_t uses);

// Parses and analyzes (never runs) each statement in a private session of
// `database` under its recorded settings (its user is the recorded
// session_authorization), into the shared analyses and the parse cache.
// Never throws.
ReplanOutcome replan_statement_history(Database& database, const std::vector<HistoryStatement>& statements);

// Session::analyze_shared's side. `key` is the settings fingerprint, a NUL,
// then the session's analysis key (text and parameter types).
std::shared_ptr<const Session::Analyzed> find_shared_analysis(const std::string& key);
// A session took what find_shared_analysis gave (its table was current).
void count_shared_analysis_reuse();
// `analyzed->runs` counts the entry's uses from now on; `uses` is added to
// them (a re-planned history statement brings its recorded count).
void share_analysis(const std::string& key, const std::string& settings, std::string_view sql,
                    std::shared_ptr<const Session::Analyzed> analyzed, uint64_t uses = 0);

// Shape templates shared by sessions (statement_shape.hpp), by planning
// settings, a NUL, and the shape key. A session without a template for a
// text's shape takes it from here (and checks its analysis as any shared
// analysis). Bounded by kMaxSharedAnalyses (on overflow they start over);
// released with stale analyses.
void share_shape(const std::string& key, std::shared_ptr<const Session::ShapeTemplate> shape);
std::shared_ptr<const Session::ShapeTemplate> find_shared_shape(const std::string& key);
// Whether any shape is shared (one relaxed load: the session's test before it lexes a text).
bool shared_shapes_exist();

// At most this many shared analyses (and history statements): each may hold
// a table snapshot, and a restarted tallyd plans them all again.
constexpr size_t kMaxSharedAnalyses = 64;

// Shared analyses a session took instead of analyzing (since the process started).
uint64_t shared_analysis_reuses();

// Forgets every shared analysis and the history (tests).
void clear_shared_analyses();

}  // namespace tally::executor
