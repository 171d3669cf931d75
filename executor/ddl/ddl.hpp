#pragma once
// DDL entry points the session calls with a parsed statement's body (the
// value of {"CreateStmt": ...} etc.). Each returns the command tag for
// CommandComplete; errors are thrown as tally::Error with PostgreSQL's SQLSTATE,
// message and cursor position; notices go to ctx.out.notice().
#include <string>

#include <nlohmann/json.hpp>

#include "executor/ddl/statement_context.hpp"

namespace tally::executor::ddl {

// CREATE TABLE [IF NOT EXISTS] name (column type [NOT NULL | NULL], ...).
std::string create_table(const nlohmann::json& create_stmt, StatementContext& ctx);
// DROP TABLE [IF EXISTS] a, b, ... (other object kinds: 0A000).
std::string drop(const nlohmann::json& drop_stmt, StatementContext& ctx);
// CREATE [UNIQUE] INDEX [IF NOT EXISTS] [name] ON table (...): checked and
// accepted; Tally keeps no indexes (create_index.cpp says why).
std::string create_index(const nlohmann::json& index_stmt, StatementContext& ctx);
// TRUNCATE [TABLE] a, b, ...
std::string truncate(const nlohmann::json& truncate_stmt, StatementContext& ctx);
// VACUUM / ANALYZE [(options)] [table [(columns)], ...]: checked and accepted
// (maintenance.cpp says why there is nothing to do).
std::string vacuum_or_analyze(const nlohmann::json& vacuum_stmt, StatementContext& ctx, bool in_transaction_block);

}  // namespace tally::executor::ddl
