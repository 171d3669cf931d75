#pragma once
// CREATE / ALTER / DROP SEQUENCE, and the sequences serial and identity
// columns own (created with their table, dropped with it).
#include <string>

#include <nlohmann/json.hpp>

#include "catalog/table_snapshot.hpp"
#include "executor/ddl/statement_context.hpp"

namespace tally::executor::ddl {

// For column `column` of def (a table being created, def.oid already
// reserved): creates the sequence it owns, named <table>_<column>_seq as
// PostgreSQL names it, with the sequence options of an identity column
// (options: a list of DefElem, or null), and sets the column's default to
// nextval('<sequence>'::regclass). Returns the sequence's oid.
uint32_t create_owned_sequence(catalog::TableDef& def, size_t column, const nlohmann::json* options,
                               StatementContext& ctx);

// Drops the sequences a dropped table owned.
void drop_owned_sequences(uint32_t table_oid, StatementContext& ctx);

// DROP SEQUENCE [IF EXISTS] a, b.
std::string drop_sequences(const nlohmann::json& drop_stmt, StatementContext& ctx);

// Whether a sequence is named `name` (relation names are shared).
bool sequence_exists(const StatementContext& ctx, const std::string& name);

}  // namespace tally::executor::ddl
