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
// ALTER TABLE [IF EXISTS] t subcommand, ...: ADD COLUMN, DROP COLUMN,
// SET/DROP NOT NULL, SET/DROP DEFAULT, ADD CONSTRAINT PRIMARY KEY/UNIQUE,
// DROP CONSTRAINT (others: 0A000).
std::string alter_table(const nlohmann::json& alter_stmt, StatementContext& ctx);
// ALTER TABLE t RENAME TO / RENAME COLUMN / RENAME CONSTRAINT.
std::string rename(const nlohmann::json& rename_stmt, StatementContext& ctx);
// CREATE SEQUENCE [IF NOT EXISTS] s [AS type] [INCREMENT n] [START n]
// [MINVALUE n | NO MINVALUE] [MAXVALUE n | NO MAXVALUE] [CACHE n] [[NO] CYCLE].
std::string create_sequence(const nlohmann::json& create_seq_stmt, StatementContext& ctx);
// ALTER SEQUENCE s RESTART [WITH n] | OWNED BY ... (others: 0A000).
std::string alter_sequence(const nlohmann::json& alter_seq_stmt, StatementContext& ctx);
// TRUNCATE [TABLE] a, b, ...
std::string truncate(const nlohmann::json& truncate_stmt, StatementContext& ctx);
// VACUUM / ANALYZE [(options)] [table [(columns)], ...]: checked and accepted
// (maintenance.cpp says why there is nothing to do).
std::string vacuum_or_analyze(const nlohmann::json& vacuum_stmt, StatementContext& ctx, bool in_transaction_block);
// LOCK TABLE a, b IN ACCESS SHARE MODE in a transaction block: checked and
// accepted (lock_table.cpp says why); other modes: 0A000.
std::string lock_table(const nlohmann::json& lock_stmt, StatementContext& ctx, bool in_transaction_block);

}  // namespace tally::executor::ddl
