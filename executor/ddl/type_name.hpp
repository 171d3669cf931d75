#pragma once
// Resolves a parse-tree TypeName ({"names": [...], "typmods": [...]}) to a
// storable SqlType with PostgreSQL's names, aliases and typmod rules:
// 42704 unknown type, 22023 bad modifiers, 0A000 for types Tally cannot store
// (numeric wider than 18 digits or unconstrained, arrays, timestamptz, ...).
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/sql_type.hpp"
#include "executor/ddl/statement_context.hpp"

namespace tally::executor {

SqlType resolve_type_name(const StatementContext& ctx, const nlohmann::json& type_name);

// Types PostgreSQL has that Tally does not store (bytea, json, uuid, ...):
// a clean 0A000 rather than 42704 "does not exist".
bool is_unsupported_postgres_type(std::string_view name);

// A storable type's internal name as the grammar writes it (pg_catalog.int4
// for "integer"), for a TypeName of a parse tree Tally makes; "" for others.
std::string_view internal_type_name(TypeId id);

}  // namespace tally::executor
