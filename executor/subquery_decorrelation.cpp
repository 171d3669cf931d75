#include "executor/subquery_decorrelation.hpp"

#include <set>

#include "common/error.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan_detail.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

// Parse locations of the column references in `node` that are outer ones.
void outer_locations(const json& node, const std::map<int, size_t>& outer_refs, std::multiset<int>& out) {
  if (node.is_object()) {
    if (node.contains("ColumnRef")) {
      const int location = node["ColumnRef"].value("location", -1);
      if (outer_refs.count(location)) out.insert(location);
    }
    for (const auto& [key, value] : node.items()) outer_locations(value, outer_refs, out);
  } else if (node.is_array()) {
    for (const auto& value : node) outer_locations(value, outer_refs, out);
  }
}

// Key types whose `=` is equality of the values as stored (char(n)'s
// trailing blanks are handled by the key helpers): not float (-0 = 0) nor
// numeric (scales).
bool plain_equality_type(TypeId id) {
  switch (id) {
    case TypeId::boolean:
    case TypeId::int2:
    case TypeId::int4:
    case TypeId::int8:
    case TypeId::text:
    case TypeId::varchar:
    case TypeId::bpchar:
    case TypeId::date:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::time:
    case TypeId::timetz:
    case TypeId::bytea:
      return true;
    default:
      return false;
  }
}

// `inner = outer` (either order) with `outer` one outer column reference and
// `inner` free of outer ones: the inner side and the outer reference's location.
bool correlation_equality(const json& part, const std::map<int, size_t>& outer_refs, json& inner, int& location) {
  if (!part.contains("A_Expr")) return false;
  const json& e = part["A_Expr"];
  if (e.value("kind", "") != "AEXPR_OP" || !e.contains("name") || e["name"].size() != 1 ||
      e["name"][0]["String"].value("sval", "") != "=" || !e.contains("lexpr") || !e.contains("rexpr")) {
    return false;
  }
  for (const char* side : {"lexpr", "rexpr"}) {
    const json& outer = e[side];
    const json& other = e[std::string(side) == "lexpr" ? "rexpr" : "lexpr"];
    if (!outer.contains("ColumnRef") || !outer_refs.count(outer["ColumnRef"].value("location", -1))) continue;
    std::multiset<int> in_other;
    outer_locations(other, outer_refs, in_other);
    if (!in_other.empty()) return false;
    inner = other;
    location = outer["ColumnRef"]["location"].get<int>();
    return true;
  }
  return false;
}

}  // namespace

std::unique_ptr<GroupedSubquery> plan_grouped_subquery(const json& select, const std::map<int, size_t>& outer_refs,
                                                       const std::vector<ExprPtr>& correlated,
                                                       const PlanContext& plan_context) {
  for (const char* clause : {"groupClause", "havingClause", "distinctClause", "limitCount", "limitOffset",
                             "windowClause", "valuesLists", "withClause", "sortClause", "lockingClause", "intoClause"}) {
    if (select.contains(clause)) return nullptr;
  }
  if (!select.contains("fromClause") || !select.contains("whereClause") ||
      select.value("op", "SETOP_NONE") != "SETOP_NONE") {
    return nullptr;
  }
  const json& targets = select["targetList"];
  // Without an aggregate the subquery may answer several rows (an error) or
  // none; with one at its top it answers exactly one row per tuple.
  if (targets.size() != 1 || !has_aggregate_call(targets) || has_window_call(targets) ||
      contains_sublink_node(targets)) {
    return nullptr;
  }
  std::vector<json> parts, rest;
  split_and(select["whereClause"], parts);
  std::vector<json> keys;
  std::vector<int> key_locations;
  std::multiset<int> matched;
  for (const auto& part : parts) {
    json inner;
    int location = -1;
    if (correlation_equality(part, outer_refs, inner, location)) {
      keys.push_back(std::move(inner));
      key_locations.push_back(location);
      matched.insert(location);
    } else {
      rest.push_back(part);
    }
  }
  if (keys.empty()) return nullptr;
  // Every outer reference must be one of those equalities' outer sides.
  std::multiset<int> everywhere;
  outer_locations(select, outer_refs, everywhere);
  if (everywhere != matched) return nullptr;

  json grouped = select;
  if (rest.empty()) grouped.erase("whereClause");
  else if (rest.size() == 1) grouped["whereClause"] = rest[0];
  else grouped["whereClause"] = json{{"BoolExpr", {{"boolop", "AND_EXPR"}, {"args", rest}}}};
  json outputs = json::array();
  for (const auto& k : keys) outputs.push_back(json{{"ResTarget", {{"val", k}}}});
  outputs.push_back(targets[0]);
  grouped["targetList"] = std::move(outputs);
  grouped["groupClause"] = keys;

  PlanContext context = plan_context;
  context.outer_column = nullptr;
  auto result = std::make_unique<GroupedSubquery>();
  try {
    result->plan = plan_select(grouped, context);
  } catch (const Error&) {
    return nullptr;  // not plannable on its own: keep the per-value form
  }
  const SelectPlan& plan = *result->plan;
  if (plan.visible != keys.size() + 1) return nullptr;
  for (size_t k = 0; k < keys.size(); ++k) {
    const size_t slot = outer_refs.at(key_locations[k]);
    const SqlType key_type = plan.outputs[k]->type;
    if (!plain_equality_type(key_type.id) || key_type.id != correlated[slot]->type.id) return nullptr;
    result->key_slots.push_back(slot);
  }
  return result;
}

}  // namespace tally::executor
