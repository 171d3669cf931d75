#pragma once
// A statement analyzed for execution: what Parse produces, what a simple
// Query runs, and the entry of the session's and the process's analysis
// caches (sql_session.hpp, shared_analyses.hpp).
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/parser.hpp"
#include "common/query_handler.hpp"

namespace tally::executor {

struct SelectPlan;

// Immutable once made; prepared statements, portals and the caches share it.
struct AnalyzedStatement {
  std::string sql;
  ParsedStatement statement;  // no tree for the empty query
  std::string kind;           // node type name
  std::vector<uint32_t> parameter_types;
  std::shared_ptr<const SelectPlan> select;  // for SELECT (and cursors/EXPLAIN of SELECT)
  std::optional<std::vector<tally::FieldDescription>> fields;
  // SqlSession::epoch_ when this was planned: a SELECT over a table planned
  // in an earlier epoch holds an old table snapshot and is re-planned at Bind.
  uint64_t planned_at = 0;
  // A SELECT over one table whose analysis depends on nothing but its text,
  // parameter types, the session's settings and the table's snapshot (no
  // function but plain aggregates, no subquery): while the table's current
  // snapshot has the version this one read (TableSnapshot::version) and the
  // settings are those of settings_generation, it is what a new analysis
  // would make, and is reused instead (SqlSession::reads_current_table).
  bool reusable_over_table = false;
  uint64_t settings_generation = 0;
  // Statements that ran with this analysis when it is one of the process's
  // shared analyses (null otherwise), so that the shared cache keeps the
  // texts that repeat; copies of it share the count.
  std::shared_ptr<std::atomic<uint64_t>> runs;
  bool is_empty() const { return !statement.tree; }
  // {"SelectStmt": {...}} and its body; only when !is_empty().
  const nlohmann::json& node() const { return statement.node(); }
  const nlohmann::json& body() const { return statement.body(); }
};

}  // namespace tally::executor
