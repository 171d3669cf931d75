#include "executor/introspection/statio_relations.hpp"

namespace tally::executor::introspection {

bool is_statio_relation(std::string_view name) {
  return name == "pg_statio_all_tables" || name == "pg_statio_user_tables";
}

std::optional<Relation> statio_relation(std::string_view name, const CatalogSource& source) {
  if (!is_statio_relation(name)) return std::nullopt;
  Relation r;
  r.columns = {{"relid", SqlType{TypeId::oid}}, {"schemaname", SqlType{TypeId::name}},
               {"relname", SqlType{TypeId::name}}};
  for (const char* counter : {"heap_blks_read", "heap_blks_hit", "idx_blks_read", "idx_blks_hit", "toast_blks_read",
                              "toast_blks_hit", "tidx_blks_read", "tidx_blks_hit"}) {
    r.columns.push_back({counter, SqlType{TypeId::int8}});
  }
  for (const auto& t : source.tables) {
    std::vector<Value> row{Value{static_cast<int64_t>(t.oid)}, Value{t.schema}, Value{t.name}};
    // Heap and index counters 0; TOAST ones NULL, as PostgreSQL shows a
    // table without a TOAST table.
    for (int i = 0; i < 4; ++i) row.push_back(Value{int64_t{0}});
    for (int i = 0; i < 4; ++i) row.push_back(Value{Null{}});
    r.rows.push_back(std::move(row));
  }
  return r;
}

}  // namespace tally::executor::introspection
