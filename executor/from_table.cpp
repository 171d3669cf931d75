#include "executor/from_table.hpp"

#include <algorithm>

#include "executor/select_plan.hpp"

namespace tally::executor {

int FromTable::column(const std::string& n) const {
  const auto& columns = table->columns();
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == n) return static_cast<int>(i);
  }
  return -1;
}

std::optional<FromTable> from_table(const nlohmann::json& item, const PlanContext& pc) {
  if (!item.contains("RangeVar") || pc.tables == nullptr) return std::nullopt;
  const nlohmann::json& rv = item["RangeVar"];
  const std::string schema = rv.value("schemaname", "");
  const std::string relation = rv.value("relname", "");
  if (!schema.empty() && schema != "public") return std::nullopt;
  if (schema.empty()) {
    // A WITH query of the same name is what the name means.
    if (std::any_of(pc.ctes.begin(), pc.ctes.end(), [&](const WithQuery& cte) { return cte.name == relation; }) ||
        std::any_of(pc.cte_relations.begin(), pc.cte_relations.end(),
                    [&](const auto& cte) { return cte.first == relation; })) {
      return std::nullopt;
    }
  }
  FromTable t;
  t.table = pc.tables->find_table(schema, relation);  // null for a view or a catalog relation
  if (!t.table) return std::nullopt;
  t.range_var = &item;
  t.name = relation;
  if (rv.contains("alias")) {
    const nlohmann::json& alias = rv["alias"].contains("Alias") ? rv["alias"]["Alias"] : rv["alias"];
    if (alias.contains("colnames")) return std::nullopt;
    t.name = alias.value("aliasname", relation);
  }
  return t;
}

}  // namespace tally::executor
