#include "executor/lateral_top_n.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "executor/binder.hpp"
#include "executor/dml/parse_nodes.hpp"
#include "executor/from_table.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {
namespace {

using json = nlohmann::json;
using dml::column_ref;
using dml::res_target;

// The names the rewrite adds: not names a user writes.
constexpr const char* kRanked = "tally_lateral";
constexpr const char* kRank = "tally_lateral_rank";
const std::string kKey = "tally_lateral_key_";

std::string text(const json& field) { return field.contains("String") ? field["String"].value("sval", "") : ""; }

enum class Side { inner, outer, unknown };

// Which query a ColumnRef of the subquery reads: its table's column, by
// name alone or with the table's name or alias, else the items before it.
Side side_of(const json& ref, const FromTable& table) {
  const json& fields = ref.value("fields", json::array());
  if (fields.size() == 1 && fields[0].contains("String")) {
    return table.column(text(fields[0])) >= 0 ? Side::inner : Side::outer;
  }
  if (fields.size() == 2 && fields[0].contains("String") && fields[1].contains("String")) {
    if (text(fields[0]) != table.name) return Side::outer;
    return table.column(text(fields[1])) >= 0 ? Side::inner : Side::unknown;
  }
  return Side::unknown;
}

// Whether every ColumnRef of `node` reads the subquery's table.
bool reads_inner_only(const json& node, const FromTable& table) {
  return !json_any(node, [&](const json& n) {
    return n.contains("ColumnRef") && side_of(n["ColumnRef"], table) != Side::inner;
  });
}

bool has_star(const json& node) {
  return json_any(node, [](const json& n) { return n.contains("A_Star"); });
}

// The LATERAL subselect `item` as a ranked derived table, and the
// equalities that join it to the items before it; nullopt where its shape
// is not the one above.
std::optional<std::pair<json, std::vector<json>>> ranked(const json& item, const PlanContext& pc) {
  if (!item.contains("RangeSubselect") || !item["RangeSubselect"].value("lateral", false)) return std::nullopt;
  const json& sub = item["RangeSubselect"];
  if (!sub.contains("alias") || sub["alias"].contains("colnames") || !sub["subquery"].contains("SelectStmt")) {
    return std::nullopt;
  }
  const std::string alias = sub["alias"].value("aliasname", "");
  const json& q = sub["subquery"]["SelectStmt"];
  for (const char* clause : {"groupClause", "havingClause", "distinctClause", "windowClause", "withClause",
                             "lockingClause", "intoClause", "valuesLists", "limitOffset"}) {
    if (q.contains(clause)) return std::nullopt;
  }
  if (q.value("op", "SETOP_NONE") != "SETOP_NONE" || !q.contains("limitCount") || !q.contains("targetList") ||
      !q.contains("fromClause") || q["fromClause"].size() != 1 ||
      q.value("limitOption", "LIMIT_OPTION_DEFAULT") == "LIMIT_OPTION_WITH_TIES") {
    return std::nullopt;
  }
  const json& limit = q["limitCount"];
  if (!limit.contains("A_Const") || !limit["A_Const"].contains("ival")) return std::nullopt;
  const int64_t n = limit["A_Const"]["ival"].value("ival", int64_t{0});
  if (n < 1 || contains_sublink_node(q) || has_aggregate_call(q["targetList"]) || has_star(q["targetList"])) {
    return std::nullopt;
  }
  const std::optional<FromTable> table = from_table(q["fromClause"][0], pc);
  if (!table || table->name == kRanked) return std::nullopt;

  // WHERE: equalities of a column of the table with a column of the items
  // before it (the keys), and conditions on the table alone.
  std::vector<json> keys, outer_keys, conditions;
  if (q.contains("whereClause")) {
    std::vector<json> conjuncts;
    split_and(q["whereClause"], conjuncts);
    for (json& c : conjuncts) {
      if (reads_inner_only(c, *table)) {
        conditions.push_back(std::move(c));
        continue;
      }
      if (!c.contains("A_Expr") || c["A_Expr"].value("kind", "") != "AEXPR_OP" || c["A_Expr"]["name"].size() != 1 ||
          text(c["A_Expr"]["name"][0]) != "=" || !c["A_Expr"].contains("lexpr") ||
          !c["A_Expr"]["lexpr"].contains("ColumnRef") || !c["A_Expr"]["rexpr"].contains("ColumnRef")) {
        return std::nullopt;
      }
      const json& a = c["A_Expr"]["lexpr"];
      const json& b = c["A_Expr"]["rexpr"];
      const Side sa = side_of(a["ColumnRef"], *table), sb = side_of(b["ColumnRef"], *table);
      if (sa == Side::inner && sb == Side::outer) {
        keys.push_back(a), outer_keys.push_back(b);
      } else if (sa == Side::outer && sb == Side::inner) {
        keys.push_back(b), outer_keys.push_back(a);
      } else {
        return std::nullopt;
      }
    }
  }
  if (keys.empty()) return std::nullopt;

  // The targets and the ORDER BY read the table alone; the targets' names
  // are distinct (the derived table lists them by name), and none is a name
  // the join's conditions use unqualified.
  std::vector<std::string> names;
  for (const json& t : q["targetList"]) {
    const json& rt = t["ResTarget"];
    if (!reads_inner_only(rt["val"], *table)) return std::nullopt;
    std::string name = rt.contains("name") ? rt["name"].get<std::string>() : output_column_name(rt["val"]);
    if (std::find(names.begin(), names.end(), name) != names.end() || name.rfind("tally_", 0) == 0) return std::nullopt;
    names.push_back(std::move(name));
  }
  for (const json& k : outer_keys) {
    const json& fields = k["ColumnRef"]["fields"];
    if (fields.size() == 1 && std::find(names.begin(), names.end(), text(fields[0])) != names.end()) return std::nullopt;
  }
  json order = json::array();
  if (q.contains("sortClause")) {
    for (json item : q["sortClause"]) {
      if (!item.contains("SortBy") || item["SortBy"].contains("useOp")) return std::nullopt;
      json& node = item["SortBy"]["node"];
      if (node.contains("A_Const")) {
        if (!node["A_Const"].contains("ival")) return std::nullopt;
        const int64_t at = node["A_Const"]["ival"].value("ival", int64_t{0});
        if (at < 1 || at > static_cast<int64_t>(q["targetList"].size())) return std::nullopt;
        node = q["targetList"][static_cast<size_t>(at - 1)]["ResTarget"]["val"];
      }
      if (!reads_inner_only(node, *table)) return std::nullopt;  // an output name: left as written
      order.push_back(std::move(item));
    }
  }

  // SELECT <targets>, <keys>, row_number() OVER (PARTITION BY <keys> ORDER
  // BY ...) FROM <table> WHERE <conditions>, then its first n per key.
  json inner_targets = q["targetList"];
  json outer_targets = json::array();
  for (const std::string& name : names) outer_targets.push_back(res_target(column_ref({kRanked, name}), name));
  for (size_t j = 0; j < keys.size(); ++j) {
    inner_targets.push_back(res_target(keys[j], kKey + std::to_string(j)));
    outer_targets.push_back(res_target(column_ref({kRanked, kKey + std::to_string(j)}), kKey + std::to_string(j)));
  }
  json over{{"partitionClause", keys}, {"frameOptions", 1058}, {"location", -1}};
  if (!order.empty()) over["orderClause"] = std::move(order);
  inner_targets.push_back(res_target(
      json{{"FuncCall", {{"funcname", json::array({json{{"String", {{"sval", "row_number"}}}}})},
                         {"over", std::move(over)},
                         {"funcformat", "COERCE_EXPLICIT_CALL"},
                         {"location", -1}}}},
      kRank));
  json inner = dml::select_stmt(std::move(inner_targets), q["fromClause"], nullptr);
  if (!conditions.empty()) inner["whereClause"] = dml::and_of(std::move(conditions));
  const json first_n = dml::operator_expr("<=", column_ref({kRanked, kRank}), dml::int_const(n));
  json from = json::array({json{{"RangeSubselect", {{"subquery", {{"SelectStmt", std::move(inner)}}},
                                                    {"alias", {{"aliasname", kRanked}}}}}}});
  json derived = dml::select_stmt(std::move(outer_targets), std::move(from), &first_n);
  json replaced{{"RangeSubselect", {{"subquery", {{"SelectStmt", std::move(derived)}}}, {"alias", sub["alias"]}}}};
  std::vector<json> joins;
  for (size_t j = 0; j < keys.size(); ++j) {
    joins.push_back(dml::operator_expr("=", outer_keys[j], column_ref({alias, kKey + std::to_string(j)})));
  }
  return std::make_pair(std::move(replaced), std::move(joins));
}

}  // namespace

std::optional<json> lateral_top_n(const json& select, const PlanContext& pc) {
  if (!select.contains("fromClause") || select.value("op", "SETOP_NONE") != "SETOP_NONE" ||
      (select.contains("targetList") && has_star(select["targetList"]))) {
    return std::nullopt;
  }
  json out = select;
  bool changed = false;
  std::vector<json> where;
  for (json& item : out["fromClause"]) {
    if (auto r = ranked(item, pc)) {
      item = std::move(r->first);
      for (json& j : r->second) where.push_back(std::move(j));
      changed = true;
      continue;
    }
    // [LEFT] JOIN LATERAL ... ON ...: the keys join in its ON.
    if (item.contains("JoinExpr")) {
      json& join = item["JoinExpr"];
      const std::string kind = join.value("jointype", "");
      if ((kind != "JOIN_INNER" && kind != "JOIN_LEFT") || join.contains("usingClause") ||
          join.value("isNatural", false)) {
        continue;
      }
      if (auto r = ranked(join["rarg"], pc)) {
        join["rarg"] = std::move(r->first);
        std::vector<json> on = std::move(r->second);
        if (join.contains("quals")) on.insert(on.begin(), join["quals"]);
        join["quals"] = dml::and_of(std::move(on));
        changed = true;
      }
    }
  }
  if (!changed) return std::nullopt;
  if (!where.empty()) {
    if (out.contains("whereClause")) where.insert(where.begin(), out["whereClause"]);
    out["whereClause"] = dml::and_of(std::move(where));
  }
  return out;
}

}  // namespace tally::executor
