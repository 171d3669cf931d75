#include "executor/distinct_grouping.hpp"

#include "executor/binder.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/project_set.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

bool has_star(const json& node) {
  return json_any(node, [](const json& n) { return n.is_object() && n.contains("A_Star"); });
}

// Whether an ORDER BY item names an output column: by position, by its
// name, or as the same expression.
bool names_output(const json& item, const json& targets) {
  if (item.contains("A_Const")) {
    const json& c = item["A_Const"];
    if (!c.contains("ival")) return false;
    const int64_t position = c["ival"].value("ival", int64_t{0});
    return position >= 1 && static_cast<size_t>(position) <= targets.size();
  }
  if (item.contains("ColumnRef")) {
    const json& fields = item["ColumnRef"].value("fields", json::array());
    if (fields.size() == 1 && fields[0].contains("String")) {
      const std::string name = fields[0]["String"].value("sval", "");
      for (const auto& t : targets) {
        if (t["ResTarget"].value("name", "") == name) return true;
      }
    }
  }
  for (const auto& t : targets) {
    if (equal_ignoring_locations(t["ResTarget"]["val"], item)) return true;
  }
  return false;
}

}  // namespace

std::optional<json> distinct_as_grouping(const json& select) {
  if (!select.contains("distinctClause")) return std::nullopt;
  const json& distinct = select["distinctClause"];
  if (distinct.size() != 1 || !distinct[0].empty()) return std::nullopt;  // DISTINCT ON
  for (const char* clause : {"groupClause", "havingClause", "windowClause", "valuesLists", "lockingClause"}) {
    if (select.contains(clause)) return std::nullopt;
  }
  if (!select.contains("fromClause") || select.value("op", "SETOP_NONE") != "SETOP_NONE") return std::nullopt;
  const json& targets = select.value("targetList", json::array());
  if (targets.empty() || has_star(targets) || has_aggregate_call(targets) || has_window_call(targets) ||
      contains_sublink_node(targets) || has_set_returning_target(select)) {
    return std::nullopt;
  }
  if (select.contains("sortClause")) {
    for (const auto& sort : select["sortClause"]) {
      if (!sort.contains("SortBy") || !names_output(sort["SortBy"]["node"], targets)) return std::nullopt;
    }
  }
  json grouped = select;
  grouped.erase("distinctClause");
  json positions = json::array();
  for (size_t i = 1; i <= targets.size(); ++i) {
    positions.push_back({{"A_Const", {{"ival", {{"ival", static_cast<int64_t>(i)}}}}}});
  }
  grouped["groupClause"] = std::move(positions);
  return grouped;
}

}  // namespace tally::executor
