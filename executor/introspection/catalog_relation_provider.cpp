#include "executor/introspection/catalog_relation_provider.hpp"

#include <algorithm>

#include "executor/introspection/sequence_scan.hpp"
#include "executor/introspection/system_relations.hpp"

namespace tally::executor::introspection {

std::shared_ptr<const MaterializedRelation> materialize(std::string name, const Relation& relation,
                                                        size_t system_columns) {
  auto out = std::make_shared<MaterializedRelation>();
  out->name = std::move(name);
  out->system_columns = system_columns;
  for (const auto& c : relation.columns) {
    out->columns.push_back({c.name, c.type});
    out->rows.columns.emplace_back(c.type);
    out->rows.columns.back().reserve(relation.rows.size());
  }
  for (const auto& row : relation.rows) {
    for (size_t c = 0; c < row.size() && c < out->rows.columns.size(); ++c) out->rows.columns[c].push(row[c]);
  }
  out->rows.rows = relation.rows.size();
  return out;
}

namespace {

// Appends a catalog table's system columns; returns how many. tableoid is
// the OID pg_class lists the table under (pg_dump reads it to tell which
// catalog each object comes from). Views have no system columns.
size_t add_system_columns(Relation& relation, std::string_view schema, std::string_view name) {
  const SystemRelation* sys = find_system_relation(name);
  if (sys == nullptr || sys->kind != 'r' || (!schema.empty() && schema != "pg_catalog")) return 0;
  const size_t width = relation.columns.size();
  relation.columns.push_back({"tableoid", SqlType{TypeId::oid}});
  for (auto& row : relation.rows) {
    row.resize(width, Value{Null{}});
    row.push_back(Value{sys->oid});
  }
  return 1;
}

}  // namespace

void CatalogRelationProvider::set_source(CatalogSource source) {
  source_ = std::move(source);
  has_source_ = true;
  built_.clear();
}

std::shared_ptr<const MaterializedRelation> CatalogRelationProvider::find(std::string_view schema,
                                                                          std::string_view name) {
  if (!is_catalog_relation(schema, name)) return sequences_ ? sequence_scan(*sequences_, schema, name) : nullptr;
  if (!has_source_) return nullptr;
  // An unqualified name finds pg_catalog's relation (the search path), and
  // information_schema's only when qualified, as in PostgreSQL.
  const std::string key = std::string(schema.empty() ? "pg_catalog" : schema) + "." + std::string(name);
  if (auto it = built_.find(key); it != built_.end()) return it->second;
  auto relation = build_relation(schema, name, source_);
  if (!relation) return nullptr;
  const size_t system_columns = add_system_columns(*relation, schema, name);
  auto made = materialize(std::string(name), *relation, system_columns);
  built_.emplace(key, made);
  return made;
}

}  // namespace tally::executor::introspection
