#pragma once
// pg_relation_size, pg_table_size, pg_total_relation_size and
// pg_indexes_size of a table named by a regclass literal ('public.t'::regclass,
// or an untyped 't'): postgres_fdw's ANALYZE of a foreign table asks the
// remote server `pg_relation_size('public.t'::pg_catalog.regclass) / 8192`
// first (deparseAnalyzeSizeSql) to size its sample. A table's size is the
// stored bytes of its columns (fixed-width values, a text value's
// dictionary code), whole pages of PostgreSQL's 8192 bytes; Tally keeps no
// indexes (pg_indexes_size is 0).
#include <memory>

#include <nlohmann/json.hpp>

#include "executor/expression.hpp"

namespace tally::executor {

class TableProvider;
class TableSnapshot;

// The table a regclass literal ('public.t'::regclass, or an untyped 't')
// names; null when `arg` is no such literal; 42P01 when no such table.
std::shared_ptr<const TableSnapshot> find_regclass_literal(const nlohmann::json& arg, TableProvider& tables);
// A table's size as these functions give it: whole 8192-byte pages.
uint64_t relation_bytes(const TableSnapshot& table);

// The call's value when `node` is such a call over a name; null for any
// other node (the binder then binds it as usual). 42P01 when no such table.
ExprPtr bind_relation_size_call(const nlohmann::json& node, TableProvider& tables);

}  // namespace tally::executor
