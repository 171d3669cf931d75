#pragma once
// The catalog relations that describe sequences and column defaults:
// pg_sequence, pg_sequences, information_schema.sequences, pg_attrdef and
// the sequences' pg_class rows (relkind 'S'), with PostgreSQL 15's columns.
// SQLAlchemy's column reflection, psql's \ds and \d, and pg_dump read them.
#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

Relation pg_sequence_relation(const CatalogSource& source);
Relation pg_sequences_relation(const CatalogSource& source);
Relation info_sequences_relation(const CatalogSource& source);
Relation pg_attrdef_relation(const CatalogSource& source);
// The oid pg_attrdef lists the default of a table's column (0-based) under.
int64_t attrdef_oid(uint32_t table_oid, size_t column);
// One pg_class row per sequence, in pg_class's column order (relation r's).
void add_sequence_classes(Relation& pg_class, const CatalogSource& source);

}  // namespace tally::executor::introspection
