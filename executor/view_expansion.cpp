#include "executor/view_expansion.hpp"

#include "catalog/view_store.hpp"
#include "executor/table_provider.hpp"

namespace tally::executor {

std::optional<ExpandedView> expand_view(const PlanContext& context, const std::string& schema,
                                        const std::string& name, const nlohmann::json* alias_colnames) {
  if (context.views == nullptr || (!schema.empty() && schema != "public")) return std::nullopt;
  auto view = context.views->find(name);
  if (!view) return std::nullopt;
  ExpandedView out;
  out.select = nlohmann::json::parse(view->query);
  out.colnames = nlohmann::json::array();
  for (size_t i = 0; i < view->columns.size(); ++i) {
    const bool renamed = alias_colnames != nullptr && i < alias_colnames->size();
    out.colnames.push_back(renamed ? (*alias_colnames)[i]
                                   : nlohmann::json{{"String", {{"sval", view->columns[i].name}}}});
  }
  // More alias names than columns: the FROM planner reports it (42P10).
  for (size_t i = view->columns.size(); alias_colnames != nullptr && i < alias_colnames->size(); ++i)
    out.colnames.push_back((*alias_colnames)[i]);
  out.context = context;
  out.context.ctes.clear();
  out.context.outer_column = nullptr;
  return out;
}

bool names_view(const PlanContext& context, const nlohmann::json& range_var) {
  const std::string schema = range_var.value("schemaname", "");
  const std::string name = range_var.value("relname", "");
  if (context.views == nullptr || (!schema.empty() && schema != "public")) return false;
  if (context.tables != nullptr && context.tables->find_table(schema, name)) return false;
  return context.views->find(name).has_value();
}

}  // namespace tally::executor
