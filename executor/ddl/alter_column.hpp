#pragma once
// ALTER TABLE ... ADD COLUMN and DROP COLUMN. Neither rewrites the stored
// rows: an added column is read as its default (a constant) or NULL in the
// chunks written before it (storage keeps that value, as PostgreSQL's
// attmissingval), a dropped column's files are deleted once no reader needs
// them (storage/table_store.cpp: relayout).
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/table_snapshot.hpp"
#include "executor/ddl/statement_context.hpp"

namespace tally::executor::ddl {

// Work that must wait until the ALTER TABLE has committed (dropping the
// sequences and views that went with a dropped column).
using AfterCommit = std::vector<std::function<void()>>;

// AT_AddColumn on def (current: the rows already stored).
void add_column(const nlohmann::json& cmd, catalog::TableDef& def, const catalog::TableSnapshot& current,
                StatementContext& ctx);
// AT_AddIdentity (ALTER COLUMN ... ADD GENERATED ... AS IDENTITY, what
// pg_dump writes for identity columns) on def: the column gets its sequence;
// the rows already stored keep their values, as in PostgreSQL.
void add_identity(const nlohmann::json& cmd, catalog::TableDef& def, StatementContext& ctx);
// AT_DropColumn on def.
void drop_column(const nlohmann::json& cmd, catalog::TableDef& def, StatementContext& ctx, AfterCommit& after);

}  // namespace tally::executor::ddl
