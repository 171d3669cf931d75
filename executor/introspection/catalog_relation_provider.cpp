#include "executor/introspection/catalog_relation_provider.hpp"

#include <algorithm>

namespace tally::executor::introspection {

std::shared_ptr<const MaterializedRelation> materialize(std::string name, const Relation& relation) {
  auto out = std::make_shared<MaterializedRelation>();
  out->name = std::move(name);
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

void CatalogRelationProvider::set_source(CatalogSource source) {
  source_ = std::move(source);
  has_source_ = true;
  built_.clear();
}

std::shared_ptr<const MaterializedRelation> CatalogRelationProvider::find(std::string_view schema,
                                                                          std::string_view name) {
  if (!has_source_ || !is_catalog_relation(schema, name)) return nullptr;
  // An unqualified name finds pg_catalog's relation (the search path), and
  // information_schema's only when qualified, as in PostgreSQL.
  const std::string key = std::string(schema.empty() ? "pg_catalog" : schema) + "." + std::string(name);
  if (auto it = built_.find(key); it != built_.end()) return it->second;
  auto relation = build_relation(schema, name, source_);
  if (!relation) return nullptr;
  auto made = materialize(std::string(name), *relation);
  built_.emplace(key, made);
  return made;
}

}  // namespace tally::executor::introspection
