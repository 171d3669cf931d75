#include "executor/project_set_grouping.hpp"

#include <map>
#include <set>
#include <string>

#include "executor/binder.hpp"
#include "executor/project_set.hpp"

namespace tally::executor {
namespace {

using nlohmann::json;

// The derived table's alias and its columns' name prefix: not names a query writes.
constexpr const char* kDerivedAlias = "__tally_expanded";
constexpr const char* kColumnPrefix = "__tally_e";

json string_node(const std::string& s) { return json{{"String", {{"sval", s}}}}; }

json column_ref(const std::string& name) {
  return json{{"ColumnRef", {{"fields", json::array({string_node(name)})}}}};
}

std::string last_name(const json& names) {
  return names.empty() || !names.back().contains("String")
             ? ""
             : names.back()["String"].value("sval", "");
}

bool is_aggregate_call(const json& node) {
  return node.is_object() && node.contains("FuncCall") && !node["FuncCall"].contains("over") &&
         is_aggregate_name(last_name(node["FuncCall"].value("funcname", json::array())));
}

// A set-returning call anywhere in the node but inside a subquery.
bool contains_set_call(const json& node) {
  if (is_set_returning_call(node)) return true;
  if (node.is_object()) {
    if (node.contains("SubLink")) return false;
    for (const auto& [k, v] : node.items()) {
      if (contains_set_call(v)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (contains_set_call(v)) return true;
    }
  }
  return false;
}

bool contains_key(const json& node, const char* key) {
  if (node.is_object()) {
    if (node.contains(key)) return true;
    for (const auto& [k, v] : node.items()) {
      if (contains_key(v, key)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (contains_key(v, key)) return true;
    }
  }
  return false;
}

// Moves the expressions the derived table computes out of the outer query.
class Hoister {
 public:
  explicit Hoister(std::set<std::string> output_names) : output_names_(std::move(output_names)) {}

  // The outer query's form of a target, HAVING or ORDER BY expression.
  json rewrite(const json& node) {
    if (is_set_returning_call(node) || (node.is_object() && node.contains("ColumnRef")))
      return hoist(node);
    if (is_aggregate_call(node)) {
      json call = node;
      auto& f = call["FuncCall"];
      if (f.contains("args")) {
        for (auto& a : f["args"]) a = hoist(a);
      }
      if (f.contains("agg_order")) {
        for (auto& s : f["agg_order"]) s["SortBy"]["node"] = hoist(s["SortBy"]["node"]);
      }
      if (f.contains("agg_filter")) f["agg_filter"] = hoist(f["agg_filter"]);
      return call;
    }
    if (node.is_object()) {
      json out = json::object();
      for (const auto& [k, v] : node.items()) out[k] = rewrite(v);
      return out;
    }
    if (node.is_array()) {
      json out = json::array();
      for (const auto& v : node) out.push_back(rewrite(v));
      return out;
    }
    return node;
  }

  // A GROUP BY or ORDER BY item: an output name or position stays as it is.
  json rewrite_key(const json& node) {
    if (node.is_object() && node.contains("A_Const")) return node;
    if (node.is_object() && node.contains("ColumnRef")) {
      const auto& fields = node["ColumnRef"]["fields"];
      if (fields.size() == 1 && output_names_.count(last_name(fields))) return node;
    }
    return rewrite(node);
  }

  const json& targets() const { return targets_; }

 private:
  json hoist(const json& node) {
    const std::string key = strip_locations(node).dump();
    auto it = hoisted_.find(key);
    if (it == hoisted_.end()) {
      const std::string name = kColumnPrefix + std::to_string(hoisted_.size());
      targets_.push_back(json{{"ResTarget", {{"name", name}, {"val", node}}}});
      it = hoisted_.emplace(key, name).first;
    }
    return column_ref(it->second);
  }

  std::set<std::string> output_names_;
  std::map<std::string, std::string> hoisted_;
  json targets_ = json::array();
};

// The name a select-list item has in the result when it has no AS.
std::string output_name(const json& val) {
  if (val.contains("ColumnRef")) return last_name(val["ColumnRef"]["fields"]);
  if (val.contains("FuncCall")) return last_name(val["FuncCall"].value("funcname", json::array()));
  return "?column?";
}

// True when a GROUP BY item is, or names (by output name or position), a
// select-list item that calls a set-returning function: only then does
// PostgreSQL expand the calls before grouping (else after, over the groups).
bool groups_by_set_function(const json& select) {
  const json targets = select.value("targetList", json::array());
  auto target_has_call = [&](size_t i) {
    return i < targets.size() && contains_set_call(targets[i]["ResTarget"]["val"]);
  };
  for (const auto& g : select.value("groupClause", json::array())) {
    if (contains_set_call(g)) return true;
    if (g.contains("A_Const") && g["A_Const"].contains("ival")) {
      const int64_t position = g["A_Const"]["ival"].value("ival", int64_t{0});
      if (position >= 1 && target_has_call(static_cast<size_t>(position - 1))) return true;
    }
    if (g.contains("ColumnRef") && g["ColumnRef"]["fields"].size() == 1) {
      const std::string name = last_name(g["ColumnRef"]["fields"]);
      for (size_t i = 0; i < targets.size(); ++i) {
        const auto& rt = targets[i]["ResTarget"];
        if (rt.contains("name") && rt["name"].get<std::string>() == name && target_has_call(i))
          return true;
      }
    }
  }
  return false;
}

}  // namespace

std::optional<json> group_after_set_functions(const json& select) {
  const json targets = select.value("targetList", json::array());
  if (!groups_by_set_function(select) || contains_key(targets, "SubLink") ||
      contains_key(select.value("havingClause", json::object()), "SubLink") ||
      select.contains("groupingSets")) {
    return std::nullopt;
  }
  std::set<std::string> names;
  for (const auto& t : targets) {
    const auto& rt = t["ResTarget"];
    names.insert(rt.contains("name") ? rt["name"].get<std::string>() : output_name(rt["val"]));
  }
  Hoister hoister(names);
  json outer = json::object();
  outer["targetList"] = json::array();
  for (const auto& t : targets) {
    const auto& rt = t["ResTarget"];
    if (rt["val"].contains("ColumnRef") &&
        rt["val"]["ColumnRef"]["fields"].back().contains("A_Star"))
      return std::nullopt;
    json item = {
        {"val", hoister.rewrite(rt["val"])},
        {"name", rt.contains("name") ? rt["name"].get<std::string>() : output_name(rt["val"])}};
    outer["targetList"].push_back(json{{"ResTarget", item}});
  }
  if (select.contains("groupClause")) {
    outer["groupClause"] = json::array();
    for (const auto& g : select["groupClause"])
      outer["groupClause"].push_back(hoister.rewrite_key(g));
  }
  if (select.contains("havingClause"))
    outer["havingClause"] = hoister.rewrite(select["havingClause"]);
  if (select.contains("sortClause")) {
    outer["sortClause"] = select["sortClause"];
    for (auto& s : outer["sortClause"])
      s["SortBy"]["node"] = hoister.rewrite_key(s["SortBy"]["node"]);
  }
  // WITH is left out: the caller plans the result where its queries are already visible.
  for (const char* clause :
       {"limitCount", "limitOffset", "limitOption", "distinctClause", "windowClause"}) {
    if (select.contains(clause)) outer[clause] = select[clause];
  }
  // The derived table: the FROM and WHERE, computing what the outer query reads.
  json inner = select;
  for (const char* clause :
       {"targetList", "groupClause", "havingClause", "sortClause", "limitCount", "limitOffset",
        "limitOption", "distinctClause", "withClause", "windowClause"}) {
    inner.erase(clause);
  }
  inner["targetList"] = hoister.targets();
  outer["fromClause"] = json::array(
      {json{{"RangeSubselect",
             {{"subquery", {{"SelectStmt", inner}}}, {"alias", {{"aliasname", kDerivedAlias}}}}}}});
  outer["op"] = "SETOP_NONE";
  return outer;
}

}  // namespace tally::executor
