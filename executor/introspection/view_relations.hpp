#pragma once
// The catalog rows of user views (CatalogSource::views): their pg_class rows
// (relkind 'v'), pg_attribute rows (no system columns: a view has none) and
// information_schema.views, with PostgreSQL 15's values. pg_views and
// information_schema.tables/columns list them beside the tables.
#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

// One pg_class row per view, in pg_class's column order (relation r's).
void add_view_classes(Relation& pg_class, const CatalogSource& source);
// The views' columns as pg_attribute rows (relation r's columns).
void add_view_attributes(Relation& pg_attribute, const CatalogSource& source);
Relation info_views_relation(const CatalogSource& source);
// pg_rewrite: each view's ON SELECT rule (_RETURN), which pg_depend ties
// to the view and to what it reads. Tally has no other rules.
Relation pg_rewrite_relation(const CatalogSource& source);
// The oid pg_rewrite lists a view's rule under (Tally keeps none: derived
// from the view's oid, as pg_attrdef's are from the table's).
int64_t view_rule_oid(uint32_t view_oid);
// The user tables, then the views shaped as tables (what
// information_schema.columns lists).
std::vector<UserTable> tables_and_views(const CatalogSource& source);

}  // namespace tally::executor::introspection
