#pragma once
// PRIMARY KEY and UNIQUE as CREATE TABLE, ALTER TABLE ... ADD CONSTRAINT and
// CREATE UNIQUE INDEX define them: names chosen as PostgreSQL chooses them
// (t_pkey, t_a_b_key, t_a_idx, with a number appended on a clash) and
// PostgreSQL's errors for a second primary key or a missing column.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/table_snapshot.hpp"
#include "executor/ddl/statement_context.hpp"

namespace tally::executor::ddl {

// Adds the key a Constraint node (CONSTR_PRIMARY / CONSTR_UNIQUE) defines
// to def. column >= 0: a column constraint on that column (no key list).
// PRIMARY KEY makes its columns NOT NULL. Returns the key's index in def.keys.
size_t add_key_constraint(catalog::TableDef& def, const nlohmann::json& constraint, int column,
                          const StatementContext& ctx);

// A name for a new key or index of def, PostgreSQL's way: table, columns
// and suffix joined by '_', then 1, 2, ... appended until no key, index or
// table of the catalog has it.
std::string choose_key_name(const catalog::TableDef& def, const std::vector<int>& columns, const std::string& suffix,
                            const StatementContext& ctx);

// Whether a table, key or index of the catalog (as ctx sees it) is named `name`.
bool relation_name_taken(const StatementContext& ctx, const std::string& name, const catalog::TableDef* also);

}  // namespace tally::executor::ddl
