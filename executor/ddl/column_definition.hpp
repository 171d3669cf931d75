#pragma once
// One column as CREATE TABLE and ALTER TABLE ... ADD COLUMN define it: name,
// type (serial kinds included) and column constraints, checked with
// PostgreSQL's SQLSTATEs.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/table_snapshot.hpp"
#include "executor/ddl/statement_context.hpp"

namespace tally::executor::ddl {

struct ColumnDefinition {
  catalog::ColumnDef column;
  // PRIMARY KEY / UNIQUE written on the column (added once the table's columns are known).
  std::vector<const nlohmann::json*> keys;
  // serial or identity: the column owns a sequence (identity_options: the
  // identity's sequence options, or null).
  bool owns_sequence = false;
  const nlohmann::json* identity_options = nullptr;
};

// The ColumnDef node `col` of table `table`.
ColumnDefinition column_definition(const nlohmann::json& col, const std::string& table, StatementContext& ctx);

// PRIMARY KEY or UNIQUE.
bool is_key_constraint(const nlohmann::json& constraint);

// 0A000 for a constraint kind Tally does not keep, in SQL words.
[[noreturn]] void unsupported_constraint(const StatementContext& ctx, const nlohmann::json& constraint);

// PostgreSQL's NAMEDATALEN - 1: longer identifiers are refused (42622).
constexpr size_t max_identifier_bytes = 63;

}  // namespace tally::executor::ddl
