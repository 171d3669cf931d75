#pragma once
// MERGE INTO t USING <source> ON <cond> WHEN [NOT] MATCHED [AND <c>] THEN
// UPDATE SET ... | DELETE | INSERT ... | DO NOTHING, as PostgreSQL 15 runs
// it, on update_delete's copy-on-write of the table: every query first, then
// one append that replaces the table's rows (where a matched row changes)
// and adds the inserted ones, committed once, so the statement is atomic.
//
// A target row's action is the first WHEN MATCHED clause whose condition its
// source row satisfies: (SELECT min(CASE WHEN c1 THEN 1 WHEN c2 THEN 2 ...
// ELSE 0 END) FROM <source> WHERE <cond>), decorrelated into a grouped join,
// and NULL for a row no source row joins. A target row that joins more than
// one source row fails the statement with 21000 where any WHEN MATCHED
// clause updates or deletes (PostgreSQL fails only where a second action
// would apply: a stricter check, whose verdict the clause conditions do not
// change). A source row no target row joins is inserted by the first WHEN NOT
// MATCHED clause whose condition holds.
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/ddl/statement_context.hpp"
#include "executor/result_set.hpp"
#include "executor/value.hpp"

namespace tally::executor {
class SqlSession;
}

namespace tally::executor::dml {

// stmt: the body of {"MergeStmt": ...}. Returns the tag "MERGE n".
ResultSet merge(SqlSession& session, const nlohmann::json& stmt, const std::vector<Value>& parameters,
                StatementContext& ctx);

}  // namespace tally::executor::dml
