#pragma once
// COPY's options, parsed from the CopyStmt's DefElem list with PostgreSQL 15's
// validation rules and messages (ProcessCopyOptions).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/table_snapshot.hpp"
#include "executor/ddl/statement_context.hpp"

namespace tally::executor::dml {

struct CopyOptions {
  bool csv = false;
  bool binary = false;
  bool header = false;
  bool header_match = false;
  char delimiter = '\t';
  std::string null_string = "\\N";
  char quote = '"';
  char escape = '"';
  // Per target column (index into the COPY's column list).
  std::vector<bool> force_null;
  std::vector<bool> force_not_null;
  std::vector<bool> force_quote;
};

// The COPY's target columns: the attlist resolved against the table (42703,
// 42701), or every column.
std::vector<int> copy_target_columns(const StatementContext& ctx, const nlohmann::json& stmt,
                                     const catalog::TableDef& def);

CopyOptions parse_copy_options(const StatementContext& ctx, const nlohmann::json& stmt,
                               const catalog::TableDef& def, const std::vector<int>& targets, bool is_from);

}  // namespace tally::executor::dml
