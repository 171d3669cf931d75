#include "executor/introspection/view_relations.hpp"

#include <algorithm>

namespace tally::executor::introspection {
namespace {

Value S(std::string s) { return Value{std::move(s)}; }

// The source's views as tables, alone: pg_class and pg_attribute build their
// rows from it and the caller turns them into a view's.
CatalogSource views_only(const CatalogSource& source) {
  CatalogSource views;
  views.database = source.database;
  views.user = source.user;
  views.with_system_relations = false;
  for (const auto& v : source.views) views.tables.push_back({v.oid, v.schema, v.name, v.columns, 0, {}});
  return views;
}

size_t column_index(const Relation& r, std::string_view name) {
  for (size_t i = 0; i < r.columns.size(); ++i)
    if (r.columns[i].name == name) return i;
  return r.columns.size();
}

void set(std::vector<Value>& row, const Relation& r, std::string_view column, Value value) {
  const size_t i = column_index(r, column);
  if (i < row.size()) row[i] = std::move(value);
}

}  // namespace

void add_view_classes(Relation& pg_class, const CatalogSource& source) {
  if (source.views.empty()) return;
  const Relation rows = build_relation("pg_catalog", "pg_class", views_only(source)).value();
  for (auto row : rows.rows) {
    // A view has no storage and no access method; its SELECT is a rule.
    set(row, pg_class, "relkind", Value{std::string("v")});
    set(row, pg_class, "relam", Value{int64_t{0}});
    set(row, pg_class, "relfilenode", Value{int64_t{0}});
    set(row, pg_class, "relhasrules", Value{true});
    set(row, pg_class, "relhasindex", Value{false});
    set(row, pg_class, "relreplident", Value{std::string("n")});
    pg_class.rows.push_back(std::move(row));
  }
}

void add_view_attributes(Relation& pg_attribute, const CatalogSource& source) {
  if (source.views.empty()) return;
  const Relation rows = build_relation("pg_catalog", "pg_attribute", views_only(source)).value();
  const size_t attnum = column_index(rows, "attnum");
  for (const auto& row : rows.rows)
    if (std::get<int64_t>(row[attnum]) > 0) pg_attribute.rows.push_back(row);
}

Relation info_views_relation(const CatalogSource& source) {
  Relation r;
  for (const char* name : {"table_catalog", "table_schema", "table_name"}) r.columns.push_back({name, {TypeId::name}});
  for (const char* name : {"view_definition", "check_option", "is_updatable", "is_insertable_into",
                           "is_trigger_updatable", "is_trigger_deletable", "is_trigger_insertable_into"})
    r.columns.push_back({name, {TypeId::varchar}});
  // Tally cannot write through a view: none is updatable.
  for (const auto& v : source.views)
    r.rows.push_back({S(source.database), S(v.schema), S(v.name), S(v.definition), S("NONE"), S("NO"), S("NO"),
                      S("NO"), S("NO"), S("NO")});
  return r;
}

std::vector<UserTable> tables_and_views(const CatalogSource& source) {
  std::vector<UserTable> out = source.tables;
  const auto views = views_only(source).tables;
  out.insert(out.end(), views.begin(), views.end());
  return out;
}

int64_t view_rule_oid(uint32_t view_oid) {
  // attrdef_oid's scheme with a column number no view has a default for.
  return static_cast<int64_t>((uint64_t{view_oid} << 11 | 0x7ff) & 0x7fffffff);
}

Relation pg_rewrite_relation(const CatalogSource& source) {
  // ev_qual and ev_action are pg_node_tree in PostgreSQL (text here, NULL).
  Relation r;
  for (const auto& [name, type] : {std::pair{"oid", TypeId::oid}, {"rulename", TypeId::name}, {"ev_class", TypeId::oid},
                                   {"ev_type", TypeId::char_}, {"ev_enabled", TypeId::char_},
                                   {"is_instead", TypeId::boolean}, {"ev_qual", TypeId::text},
                                   {"ev_action", TypeId::text}}) {
    r.columns.push_back({name, SqlType{type}});
  }
  // ev_type '1': ON SELECT; ev_enabled 'O': fires in origin mode.
  for (const auto& v : source.views) {
    r.rows.push_back({Value{view_rule_oid(v.oid)}, Value{std::string("_RETURN")}, Value{int64_t{v.oid}},
                      Value{std::string("1")}, Value{std::string("O")}, Value{true}, Value{Null{}}, Value{Null{}}});
  }
  return r;
}

}  // namespace tally::executor::introspection
