#pragma once
// DML entry points the session calls with a parsed statement's body. Each
// returns the command tag ("INSERT 0 3", "COPY 10"); an error leaves the table
// exactly as before (appends commit only at the end).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/ddl/statement_context.hpp"

namespace tally::executor::dml {

// The rows an INSERT added, each value in PostgreSQL's text output (nullopt:
// NULL), one per table column: what RETURNING returns.
struct InsertedRows {
  std::vector<std::vector<std::optional<std::string>>> rows;
  // ON CONFLICT DO UPDATE: the proposed rows that met a stored row on the
  // arbiter key (columns update_key), for the caller's UPDATE.
  std::vector<std::vector<std::optional<std::string>>> conflicting;
  std::vector<int> update_key;
};

// INSERT INTO t [(cols)] VALUES (...), ... | DEFAULT VALUES, with constant
// expressions (and nextval) and PostgreSQL's assignment casts; columns not
// given take their DEFAULT. INSERT ... SELECT: 0A000. inserted: filled with
// the rows (RETURNING); null: RETURNING is refused.
std::string insert(const nlohmann::json& insert_stmt, StatementContext& ctx, InsertedRows* inserted = nullptr);

// COPY t [(cols)] FROM STDIN | 'file' and COPY t [(cols)] TO STDOUT | 'file',
// text and CSV formats (HEADER, DELIMITER, NULL, QUOTE, ESCAPE, FORCE_NULL,
// FORCE_NOT_NULL, FORCE_QUOTE, ENCODING 'UTF8'). COPY (query) TO is
// dml::copy_query (copy_query.hpp), which needs the session.
std::string copy(const nlohmann::json& copy_stmt, StatementContext& ctx);

}  // namespace tally::executor::dml
