#pragma once
// UPDATE t SET c = expr, ... [WHERE ...] [RETURNING ...] and DELETE FROM t
// [WHERE ...] [RETURNING ...] on the columnar storage, by copy-on-write of
// the table's chunks: under the table's write lock the statement reads the
// rows its WHERE does not match and the new versions of those it does (both
// through the ordinary SELECT planner and engines), then one append replaces
// every chunk of the table with them. Readers keep their snapshot of the old
// chunks; the commit is one catalog transaction (the block's in BEGIN ...
// COMMIT), so the change is atomic and durable like an INSERT's, and chunk
// statistics are exact. The cost is a rewrite of the whole table, so these
// suit small and medium tables; a statement matching no row writes nothing.
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/ddl/statement_context.hpp"
#include "executor/result_set.hpp"
#include "executor/value.hpp"

namespace tally::executor {
class SqlSession;
}

namespace tally::executor::dml {

// stmt: the body of {"UpdateStmt": ...} or {"DeleteStmt": ...}. Returns the
// RETURNING rows with tag "UPDATE n"/"DELETE n", or just the tag.
ResultSet update_or_delete(SqlSession& session, const nlohmann::json& stmt, bool is_update,
                           const std::vector<Value>& parameters, StatementContext& ctx);

}  // namespace tally::executor::dml
