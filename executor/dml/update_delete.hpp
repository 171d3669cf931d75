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
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/ddl/statement_context.hpp"
#include "executor/result_set.hpp"
#include "executor/table_provider.hpp"
#include "executor/value.hpp"

namespace tally::executor {
class SqlSession;
}

namespace tally::executor::dml {

// stmt: the body of {"UpdateStmt": ...} or {"DeleteStmt": ...}. Returns the
// RETURNING rows with tag "UPDATE n"/"DELETE n", or just the tag.
ResultSet update_or_delete(SqlSession& session, const nlohmann::json& stmt, bool is_update,
                           const std::vector<Value>& parameters, StatementContext& ctx);

// The SELECT that reads the rows an UPDATE or DELETE matches, with each
// row's new version (the SET values cast to their columns' types). Planned at
// Parse, it gives the statement's untyped parameters their types as
// PostgreSQL does (SET c = $1: c's type; WHERE a = $2: a's).
nlohmann::json matched_rows_select(const nlohmann::json& stmt, const std::vector<TableColumn>& columns,
                                   const std::map<std::string, nlohmann::json>& new_values);
// Plans and runs a SELECT parse tree with the statement's parameters.
ResultSet run_select_body(SqlSession& session, const nlohmann::json& select, const std::vector<Value>& parameters,
                          const StatementContext& ctx);
// `value` cast to a column's type, as a stored new value is: a TypeName
// parsed from PostgreSQL's own spelling of the type, typmod included.
nlohmann::json cast_to(const nlohmann::json& value, SqlType type);
// An UPDATE's SET column -> value (DEFAULT as NULL), unchecked.
std::map<std::string, nlohmann::json> set_values(const nlohmann::json& stmt);

}  // namespace tally::executor::dml
