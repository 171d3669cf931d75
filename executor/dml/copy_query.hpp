#pragma once
// COPY (query) TO STDOUT | 'file': the SELECT is planned and run by the same
// planner and engines as a plain SELECT (so its rows, text and errors are a
// SELECT's), then rendered with COPY's text/CSV writers (copy_to.hpp).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/ddl/statement_context.hpp"
#include "executor/value.hpp"

namespace tally::executor {
class SqlSession;
}

namespace tally::executor::dml {

// Returns the command tag ("COPY n"). Queries other than SELECT (INSERT/
// UPDATE/DELETE ... RETURNING) answer 0A000, as does SELECT INTO (PostgreSQL's
// own message).
std::string copy_query(SqlSession& session, const nlohmann::json& copy_stmt, const std::vector<Value>& parameters,
                       StatementContext& ctx);

}  // namespace tally::executor::dml
