#pragma once
// CREATE [OR REPLACE] VIEW and DROP VIEW, and the dependency rules DROP TABLE
// follows for the views that read a table (PostgreSQL's pg_depend: 2BP01
// unless CASCADE, which drops the views too). Views are not transactional
// here: inside a transaction block, changing them answers 0A000.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/view_store.hpp"
#include "executor/ddl/statement_context.hpp"

namespace tally::executor::ddl {

// The output columns a SELECT would have (its names and types), planned in
// the session that runs CREATE VIEW.
using DescribeSelect = std::function<std::vector<catalog::ViewColumn>(const nlohmann::json& select)>;

// `statement_end`: the byte offset in ctx.query_text where the statement ends.
std::string create_view(const nlohmann::json& view_stmt, StatementContext& ctx, const DescribeSelect& describe,
                        size_t statement_end);
// DROP VIEW [IF EXISTS] a, b [CASCADE | RESTRICT].
std::string drop_views(const nlohmann::json& drop_stmt, StatementContext& ctx);
// Before DROP TABLE drops the tables `oids`: 2BP01 when views read them,
// unless the statement says CASCADE, which drops those views (with
// PostgreSQL's notice) first.
void drop_dependent_views(const std::vector<uint32_t>& oids, const nlohmann::json& drop_stmt, StatementContext& ctx);

// Whether a view may read column `column` of `table` (a reference by that
// name or a `*`: may_read_column in view_ddl.cpp).
bool view_reads_column(const catalog::TableDef& table, const std::string& column, const StatementContext& ctx);
// DROP COLUMN `column` of `table`: the views that read it and the views
// over those, each after what it reads; 2BP01 as PostgreSQL when there are
// any and not `cascade`.
std::vector<catalog::ViewDef> column_dependents(const catalog::TableDef& table, const std::string& column,
                                                bool cascade, StatementContext& ctx);
// Drops views (from column_dependents) with PostgreSQL's "drop cascades to" notice.
void drop_with_notice(const std::vector<catalog::ViewDef>& dependents, StatementContext& ctx);

}  // namespace tally::executor::ddl
