#pragma once
// DML entry points the session calls with a parsed statement's body. Each
// returns the command tag ("INSERT 0 3", "COPY 10"); an error leaves the table
// exactly as before (appends commit only at the end).
#include <string>

#include <nlohmann/json.hpp>

#include "executor/ddl/statement_context.hpp"

namespace tally::executor::dml {

// INSERT INTO t [(cols)] VALUES (...), ... | DEFAULT VALUES, with constant
// expressions and PostgreSQL's assignment casts. INSERT ... SELECT: 0A000.
std::string insert(const nlohmann::json& insert_stmt, StatementContext& ctx);

// COPY t [(cols)] FROM STDIN | 'file' and COPY t [(cols)] TO STDOUT | 'file',
// text and CSV formats (HEADER, DELIMITER, NULL, QUOTE, ESCAPE, FORCE_NULL,
// FORCE_NOT_NULL, FORCE_QUOTE, ENCODING 'UTF8'). COPY (query) TO is
// dml::copy_query (copy_query.hpp), which needs the session.
std::string copy(const nlohmann::json& copy_stmt, StatementContext& ctx);

}  // namespace tally::executor::dml
