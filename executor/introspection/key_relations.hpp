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

}  // namespace tally::executor::introspection
