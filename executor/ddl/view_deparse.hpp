#pragma once
// A view's query as PostgreSQL's pg_get_viewdef(view [, pretty]) prints it
// (columns qualified by their relation; not pretty: every operation
// parenthesized), for the simple views Tally can print that way: SELECT of
// columns, constants, operators, AND/OR/NOT and function calls FROM one
// table [WHERE ...] [GROUP BY columns] [ORDER BY columns]. Anything else:
// nullopt, and the view keeps its query as written.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/table_snapshot.hpp"
#include "catalog/view_store.hpp"

namespace tally::executor::ddl {

// select: the SelectStmt node; table: the one relation it reads; columns:
// the view's output columns (names after any CREATE VIEW column list).
// pretty: pg_get_viewdef(view, true)'s form (only the parentheses PostgreSQL
// keeps where precedence needs them). qualify: the table schema-qualified,
// as PostgreSQL prints a relation its search path does not reach.
std::optional<std::string> deparse_view(const nlohmann::json& select, const catalog::TableDef& table,
                                        const std::vector<catalog::ViewColumn>& columns, bool pretty = false,
                                        bool qualify = false);

}  // namespace tally::executor::ddl
