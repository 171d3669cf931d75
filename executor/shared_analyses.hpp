#pragma once
// Analyses of SELECTs over one table shared by every session of the process:
// a client that connects per statement, or many clients sending the same
// text, plan it once.
//
// An entry is an AnalyzedStatement that is reusable_over_table, keyed by the
// statement text, its parameter types and the planning settings (every setting
// but a few that only the executor or the wire read, see
// planning_settings_fingerprint). A session that has not analyzed a text takes
// the entry when its table's current snapshot is the one the entry read (the
// same check as the session's own analysis cache), so an INSERT, COPY,
// TRUNCATE, DROP or CREATE in between makes it analyze afresh, exactly as
// without this cache.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "executor/analyzed_statement.hpp"

namespace tally::executor {

class TableProvider;

// The planning settings of a session as "name=value\n" lines (settings by
// lower-case name, as Settings::snapshot gives them), leaving out those that
// no analysis reads: the executor's knobs (tally.engine, tally.variant,
// tally.launch_config), timeouts, application_name and the
// transaction's isolation and read-only state.
std::string planning_settings_fingerprint(const std::map<std::string, std::string>& settings);

// Releases the analyses whose table's current snapshot in `tables` is not
// the one they read: an analysis holds its table snapshot, and so the files a
// DROP or TRUNCATE retired.
void release_stale_shared_analyses(TableProvider& tables);

// SqlSession::analyze_shared's side. `key` is the settings fingerprint, a NUL,
// then the session's analysis key (text and parameter types).
std::shared_ptr<const AnalyzedStatement> find_shared_analysis(const std::string& key);
// A session took what find_shared_analysis gave (its table was current).
void count_shared_analysis_reuse();
// `analyzed->runs` counts the entry's uses from now on: when the cache is
// full, the least used entry leaves.
void share_analysis(const std::string& key, std::shared_ptr<const AnalyzedStatement> analyzed);

// At most this many shared analyses: each may hold a table snapshot.
constexpr size_t kMaxSharedAnalyses = 64;

// Shared analyses a session took instead of analyzing (since the process started).
uint64_t shared_analysis_reuses();

// Forgets every shared analysis (tests).
void clear_shared_analyses();

}  // namespace tally::executor
