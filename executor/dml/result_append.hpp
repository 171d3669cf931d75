#pragma once
// Appending a query's result to a table (INSERT ... SELECT, CREATE TABLE AS,
// the rewritten rows of UPDATE and DELETE): PostgreSQL's assignment casts
// per target column and NOT NULL checks, column by column into a TableAppender.
#include <cstdint>
#include <string>
#include <vector>

#include "executor/ddl/statement_context.hpp"
#include "executor/result_set.hpp"
#include "executor/table_provider.hpp"

namespace tally::storage {
class TableAppender;
}

namespace tally::executor::dml {

// 42804 when a result column cannot be assigned to its target column
// (targets[i]: the table column result column i goes to).
void check_assignable(const ResultSet& result, const std::vector<int>& targets,
                      const std::vector<TableColumn>& columns);

// Adds every row of `result` to the appender (columns not among targets are
// NULL). Throws 23502 on a NULL in a NOT NULL column; the caller then drops
// the appender uncommitted. Returns the number of rows added.
uint64_t append_result_rows(storage::TableAppender& appender, const ResultSet& result,
                            const std::vector<int>& targets, const std::vector<TableColumn>& columns,
                            const std::string& table_name);

// The columns an INSERT ... SELECT leaves out take their DEFAULT (a
// constant, or nextval once per row), as in PostgreSQL: added to the result
// as more target columns.
void add_default_columns(const StatementContext& ctx, const std::string& name, ResultSet& result,
                         std::vector<int>& targets);

}  // namespace tally::executor::dml
