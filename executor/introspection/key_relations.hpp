#pragma once
// The catalog relations that describe tables' keys and indexes (PRIMARY KEY,
// UNIQUE, CREATE INDEX; catalog/table_snapshot.hpp: KeyConstraint):
// pg_constraint, pg_index, the indexes' pg_class rows, and
// information_schema.table_constraints and key_column_usage, with the values
// PostgreSQL 15 holds for the same definitions. Reflection (SQLAlchemy's
// get_pk_constraint and get_indexes, pgjdbc's getPrimaryKeys and
// getIndexInfo, psql's \d) reads these.
#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

Relation pg_constraint_relation(const CatalogSource& source);
Relation pg_index_relation(const CatalogSource& source);
Relation table_constraints_relation(const CatalogSource& source);
Relation key_column_usage_relation(const CatalogSource& source);
// One pg_class row per index, in pg_class's column order (relation r's).
void add_index_classes(Relation& pg_class, const CatalogSource& source);
// A pg_class row (in pg_class's column order) of a relation Tally derives
// from a table's definition: an index (kind 'i') or a sequence ('S').
std::vector<Value> class_row(const Relation& pg_class, uint32_t oid, const std::string& name, char kind, int64_t natts,
                             int64_t am);

}  // namespace tally::executor::introspection
