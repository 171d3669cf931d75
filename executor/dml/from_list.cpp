#include "executor/dml/from_list.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "executor/dml/parse_nodes.hpp"
#include "executor/plan_expressions.hpp"

namespace tally::executor::dml {

using nlohmann::json;

namespace {

const json kNoList = json::array();

// Unqualified column names outside nested subqueries (whose own FROM binds
// their names first).
void unqualified_names(const json& root, std::vector<std::pair<std::string, int>>& out) {
  json_walk(root, [&](const json& node) {
    if (node.contains("SubLink")) return WalkStep::skip_children;
    if (!node.contains("ColumnRef")) return WalkStep::descend;
    const json& fields = node["ColumnRef"].value("fields", json::array());
    if (fields.size() == 1 && fields[0].contains("String"))
      out.emplace_back(fields[0]["String"].value("sval", ""), node["ColumnRef"].value("location", -1));
    return WalkStep::skip_children;
  });
}

}  // namespace

bool names_a_column(const json& value) {
  return json_any(value, [](const json& n) { return n.is_object() && n.contains("ColumnRef"); });
}

json sublink(const std::string& type, json value, const json& list, const json* where) {
  json select = select_stmt(json::array({res_target(std::move(value))}), list, where);
  return {{"SubLink", {{"subLinkType", type}, {"subselect", {{"SelectStmt", std::move(select)}}}, {"location", -1}}}};
}

json least_over(const json& value, const json& list, const json* where) {
  json least = {{"FuncCall", {{"funcname", json::array({{{"String", {{"sval", "min"}}}}})},
                              {"args", json::array({value})},
                              {"funcformat", "COERCE_EXPLICIT_CALL"},
                              {"location", -1}}}};
  return sublink("EXPR_SUBLINK", std::move(least), list, where);
}


const json& from_list(const json& stmt, bool is_update) {
  const char* key = is_update ? "fromClause" : "usingClause";
  return stmt.contains(key) ? stmt[key] : kNoList;
}

void refuse_target_named_again(const json& list, const std::string& target_name) {
  for (const json& item : list) {
    if (!item.contains("RangeVar")) continue;
    const json& rv = item["RangeVar"];
    if (!rv.contains("alias") && rv.value("relname", "") == target_name)
      throw Error(SqlState::duplicate_alias, "table name \"" + target_name + "\" specified more than once");
  }
}

json without_from_list(const json& stmt, bool is_update, const std::string& target_name) {
  const json& list = from_list(stmt, is_update);
  if (list.empty()) return stmt;
  refuse_target_named_again(list, target_name);
  json out = stmt;
  out.erase(is_update ? "fromClause" : "usingClause");
  const json* where = stmt.contains("whereClause") ? &stmt["whereClause"] : nullptr;
  if (is_update) {
    for (json& t : out["targetList"]) {
      json& value = t["ResTarget"]["val"];
      // A value that names no column is the same for every joined row, and
      // a bare literal or parameter keeps the column's type that way.
      if (!names_a_column(value)) continue;
      value = least_over(value, list, where);
    }
  }
  out["whereClause"] = sublink("EXISTS_SUBLINK", int_const(1), list, where);
  return out;
}

json from_list_columns_select(const json& list) {
  json star = {{"ColumnRef", {{"fields", json::array({{{"A_Star", json::object()}}})}}}};
  json select = select_stmt(json::array({res_target(std::move(star))}), list, nullptr);
  select["limitCount"] = int_const(0);
  select["limitOption"] = "LIMIT_OPTION_COUNT";
  return select;
}

std::optional<std::pair<std::string, int>> ambiguous_name(const std::vector<const json*>& nodes,
                                                          const std::vector<std::string>& target_columns,
                                                          const std::vector<std::string>& list_columns) {
  std::vector<std::pair<std::string, int>> names;
  for (const json* node : nodes) unqualified_names(*node, names);
  const auto in = [](const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); };
  for (const auto& n : names)
    if (in(target_columns, n.first) && in(list_columns, n.first)) return n;
  return std::nullopt;
}

}  // namespace tally::executor::dml
