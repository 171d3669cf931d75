#pragma once
// INSERT ... ON CONFLICT (...) DO UPDATE SET ... [WHERE ...] [RETURNING ...]:
// insert() appends the proposed rows that meet no stored row and hands back
// the others (InsertedRows::conflicting); this runs one UPDATE over the
// stored rows they met, through update_delete.*:
//   UPDATE t SET c = CASE WHEN <key = row 1's> THEN <SET value, EXCLUDED =
//   row 1> ... ELSE c END WHERE (<key = row 1's> AND <WHERE, EXCLUDED =
//   row 1>) OR ...
// The append and the UPDATE are two commits outside a transaction block
// (one, at COMMIT, inside it).
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/ddl/statement_context.hpp"
#include "executor/dml/dml.hpp"
#include "executor/result_set.hpp"
#include "executor/value.hpp"

namespace tally::executor {
class SqlSession;
}

namespace tally::executor::dml {

// Whether an InsertStmt is INSERT ... ON CONFLICT ... DO UPDATE.
bool is_on_conflict_update(const nlohmann::json& insert_stmt);

// inserted: what insert() gave; appended: its result (tag "INSERT 0 n" and
// the RETURNING rows of the inserted rows). Returns the statement's result:
// the updated rows counted and RETURNING after the inserted ones.
ResultSet update_conflicting(SqlSession& session, const nlohmann::json& insert_stmt, const InsertedRows& inserted,
                             const std::vector<Value>& parameters, StatementContext& ctx, ResultSet appended);

}  // namespace tally::executor::dml
