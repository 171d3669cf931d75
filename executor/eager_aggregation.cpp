#include "executor/eager_aggregation.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "executor/binder.hpp"
#include "executor/from_table.hpp"
#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"

namespace tally::executor {
namespace {

using json = nlohmann::json;

// The subquery's alias and its columns' names: not names a user writes.
constexpr const char* kAlias = "tally_eager";
constexpr const char* kKeyColumn = "tally_key";

struct Column {
  bool preserved = false;  // of the preserved side (c), else of the other (o)
  int index = -1;
};

struct Resolver {
  const FromTable& preserved;
  const FromTable& other;

  // The side and column a ColumnRef names, or nullopt where it does not
  // name exactly one column of the two (an outer query's column included).
  std::optional<Column> resolve(const json& ref) const {
    const json& fields = ref.value("fields", json::array());
    auto text = [](const json& f) { return f.contains("String") ? f["String"].value("sval", "") : std::string(); };
    if (fields.size() == 1 && fields[0].contains("String")) {
      const std::string name = text(fields[0]);
      const int c = preserved.column(name), o = other.column(name);
      if ((c >= 0) == (o >= 0)) return std::nullopt;
      return c >= 0 ? Column{true, c} : Column{false, o};
    }
    if (fields.size() == 2 && fields[0].contains("String") && fields[1].contains("String")) {
      const std::string qualifier = text(fields[0]), name = text(fields[1]);
      if (preserved.name == other.name) return std::nullopt;
      if (qualifier == preserved.name && preserved.column(name) >= 0) return Column{true, preserved.column(name)};
      if (qualifier == other.name && other.column(name) >= 0) return Column{false, other.column(name)};
    }
    return std::nullopt;
  }

  // Whether every column `node` reads is of the preserved side (or of the
  // other), with no subquery, aggregate or window call in it.
  bool reads_only(const json& node, bool of_preserved) const {
    if (node.is_array()) {
      return std::all_of(node.begin(), node.end(), [&](const json& v) { return reads_only(v, of_preserved); });
    }
    if (!node.is_object()) return true;
    if (node.contains("SubLink")) return false;
    if (node.contains("ColumnRef")) {
      const std::optional<Column> c = resolve(node["ColumnRef"]);
      return c && c->preserved == of_preserved;
    }
    if (node.contains("FuncCall")) {
      const json& f = node["FuncCall"];
      const json& names = f["funcname"];
      if (f.contains("over") || is_aggregate_name(names[names.size() - 1]["String"].value("sval", ""))) return false;
    }
    for (const auto& [key, value] : node.items()) {
      if (!reads_only(value, of_preserved)) return false;
    }
    return true;
  }
};

void split_and(const json& node, std::vector<json>& out) {
  if (node.contains("BoolExpr") && node["BoolExpr"].value("boolop", "") == "AND_EXPR") {
    for (const json& a : node["BoolExpr"]["args"]) split_and(a, out);
    return;
  }
  out.push_back(node);
}

json and_of(std::vector<json> conjuncts) {
  if (conjuncts.size() == 1) return std::move(conjuncts[0]);
  return json{{"BoolExpr", {{"boolop", "AND_EXPR"}, {"args", std::move(conjuncts)}, {"location", -1}}}};
}

json column_ref(const std::string& relation, const std::string& column) {
  return json{{"ColumnRef",
               {{"fields", json::array({json{{"String", {{"sval", relation}}}}, json{{"String", {{"sval", column}}}}})},
                {"location", -1}}}};
}

json target(json value, const std::string& name) {
  return json{{"ResTarget", {{"name", name}, {"val", std::move(value)}, {"location", -1}}}};
}

// An aggregate the subquery can compute: count, sum, avg, min or max of one
// argument, without DISTINCT, FILTER, an ORDER BY or a window.
bool movable_aggregate(const json& node) {
  if (!node.contains("FuncCall")) return false;
  const json& f = node["FuncCall"];
  if (f.contains("over") || f.contains("agg_star") || f.contains("agg_distinct") || f.contains("agg_filter") ||
      f.contains("agg_order") || f.value("agg_within_group", false) || f.value("func_variadic", false)) {
    return false;
  }
  const json& names = f["funcname"];
  if (names.size() > 2 || (names.size() == 2 && names[0]["String"].value("sval", "") != "pg_catalog")) return false;
  static const std::set<std::string> kMovable = {"count", "sum", "avg", "min", "max"};
  return kMovable.count(names[names.size() - 1]["String"].value("sval", "")) > 0 && f.contains("args") &&
         f["args"].size() == 1;
}

// Whether `node` is NULL wherever the other side's columns are (a left
// join's unmatched row): the other side's columns, constants and casts
// under arithmetic operators, at least one such column among them.
// count(1) or count(coalesce(o.x, 0)) count the unmatched row, which the
// grouped subquery never sees: those keep the join.
bool null_without_other_row(const json& node, const Resolver& r, bool& reads_other) {
  if (node.contains("ColumnRef")) {
    const std::optional<Column> c = r.resolve(node["ColumnRef"]);
    reads_other = reads_other || (c && !c->preserved);
    return c && !c->preserved;
  }
  if (node.contains("A_Const")) return true;
  if (node.contains("TypeCast")) return null_without_other_row(node["TypeCast"]["arg"], r, reads_other);
  if (node.contains("A_Expr")) {
    const json& e = node["A_Expr"];
    static const std::set<std::string> kStrict = {"+", "-", "*", "/", "%"};
    if (e.value("kind", "") != "AEXPR_OP" || e["name"].size() != 1 ||
        kStrict.count(e["name"][0]["String"].value("sval", "")) == 0) {
      return false;
    }
    for (const char* side : {"lexpr", "rexpr"}) {
      if (e.contains(side) && !null_without_other_row(e[side], r, reads_other)) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

std::optional<json> eager_aggregation(const json& select, const PlanContext& pc) {
  for (const char* clause : {"havingClause", "distinctClause", "windowClause", "withClause", "lockingClause",
                             "intoClause", "valuesLists"}) {
    if (select.contains(clause)) return std::nullopt;
  }
  if (select.value("op", "SETOP_NONE") != "SETOP_NONE" || !select.contains("fromClause") ||
      !select.contains("groupClause") || !select.contains("targetList")) {
    return std::nullopt;
  }
  const json& from = select["fromClause"];
  if (from.size() != 1 || !from[0].contains("JoinExpr")) return std::nullopt;
  const json& join = from[0]["JoinExpr"];
  const std::string kind = join.value("jointype", "");
  if ((kind != "JOIN_LEFT" && kind != "JOIN_RIGHT") || join.value("isNatural", false) || join.contains("usingClause") ||
      join.contains("alias") || !join.contains("quals")) {
    return std::nullopt;
  }
  const bool left = kind == "JOIN_LEFT";
  const std::optional<FromTable> preserved = from_table(left ? join["larg"] : join["rarg"], pc);
  const std::optional<FromTable> other = from_table(left ? join["rarg"] : join["larg"], pc);
  if (!preserved || !other) return std::nullopt;
  // The names the rewrite adds must not meet the preserved side's own.
  if (preserved->name == kAlias || std::any_of(preserved->table->columns().begin(), preserved->table->columns().end(),
                                                [](const TableColumn& c) { return c.name.rfind("tally_", 0) == 0; })) {
    return std::nullopt;
  }
  const Resolver r{*preserved, *other};

  // ON: one equality of a preserved column with an other column; the rest
  // reads the other side only (it picks the rows that may match).
  std::vector<json> conjuncts, other_conditions;
  split_and(join["quals"], conjuncts);
  std::optional<Column> key, other_key;
  const json* other_key_node = nullptr;
  for (const json& c : conjuncts) {
    if (!key && c.contains("A_Expr") && c["A_Expr"].value("kind", "") == "AEXPR_OP" &&
        c["A_Expr"]["name"].size() == 1 && c["A_Expr"]["name"][0]["String"].value("sval", "") == "=" &&
        c["A_Expr"].contains("lexpr") && c["A_Expr"].contains("rexpr") && c["A_Expr"]["lexpr"].contains("ColumnRef") &&
        c["A_Expr"]["rexpr"].contains("ColumnRef")) {
      const json& a = c["A_Expr"]["lexpr"];
      const json& b = c["A_Expr"]["rexpr"];
      const std::optional<Column> ca = r.resolve(a["ColumnRef"]), cb = r.resolve(b["ColumnRef"]);
      if (ca && cb && ca->preserved != cb->preserved) {
        key = ca->preserved ? ca : cb;
        other_key = ca->preserved ? cb : ca;
        other_key_node = ca->preserved ? &b : &a;
        continue;
      }
    }
    if (!r.reads_only(c, false)) return std::nullopt;
    other_conditions.push_back(c);
  }
  if (!key) return std::nullopt;
  const auto& preserved_columns = preserved->table->columns();
  const auto& other_columns = other->table->columns();
  if (preserved_columns[static_cast<size_t>(key->index)].type.id != other_columns[static_cast<size_t>(other_key->index)].type.id) {
    return std::nullopt;
  }

  // GROUP BY: columns of the preserved side holding the join key and a
  // unique key of NOT NULL columns, so that each group is one of its rows.
  std::set<int> grouped;
  for (const json& g : select["groupClause"]) {
    if (!g.contains("ColumnRef")) return std::nullopt;
    const std::optional<Column> c = r.resolve(g["ColumnRef"]);
    if (!c || !c->preserved) return std::nullopt;
    grouped.insert(c->index);
  }
  if (grouped.count(key->index) == 0) return std::nullopt;
  bool one_row_per_group = false;
  for (const std::vector<int>& unique : preserved->table->unique_keys()) {
    one_row_per_group = one_row_per_group || (!unique.empty() && std::all_of(unique.begin(), unique.end(), [&](int c) {
                          return grouped.count(c) > 0 && preserved_columns[static_cast<size_t>(c)].not_null;
                        }));
  }
  if (!one_row_per_group) return std::nullopt;
  if (select.contains("whereClause") && !r.reads_only(select["whereClause"], true)) return std::nullopt;

  // The targets: grouped columns of the preserved side, and aggregates of
  // the other side's columns.
  json sub_targets = json::array({target(*other_key_node, kKeyColumn)});
  json targets = json::array();
  for (const json& t : select["targetList"]) {
    const json& rt = t["ResTarget"];
    const json& value = rt["val"];
    const std::string name = rt.contains("name") ? rt["name"].get<std::string>() : output_column_name(value);
    if (value.contains("ColumnRef")) {
      const std::optional<Column> c = r.resolve(value["ColumnRef"]);
      if (!c || !c->preserved || grouped.count(c->index) == 0) return std::nullopt;
      targets.push_back(t);
      continue;
    }
    bool reads_other = false;
    if (!movable_aggregate(value) || !null_without_other_row(value["FuncCall"]["args"][0], r, reads_other) ||
        !reads_other) {
      return std::nullopt;
    }
    const std::string column = "tally_aggregate_" + std::to_string(sub_targets.size() - 1);
    sub_targets.push_back(target(value, column));
    const json& names = value["FuncCall"]["funcname"];
    json looked_up = column_ref(kAlias, column);
    if (names[names.size() - 1]["String"].value("sval", "") == "count") {
      // No matched row: the count is 0, not the join's NULL.
      looked_up = json{{"CoalesceExpr",
                        {{"args", json::array({std::move(looked_up), json{{"A_Const", {{"ival", {{"ival", 0}}}, {"location", -1}}}}})},
                         {"location", -1}}}};
    }
    targets.push_back(target(std::move(looked_up), name));
  }
  if (sub_targets.size() < 2) return std::nullopt;
  // ORDER BY: output names and positions (kept by the rewrite) and grouped
  // columns of the preserved side.
  if (select.contains("sortClause")) {
    for (const json& item : select["sortClause"]) {
      if (!item.contains("SortBy") || item["SortBy"].contains("useOp")) return std::nullopt;
      const json& node = item["SortBy"]["node"];
      if (node.contains("A_Const") && node["A_Const"].contains("ival")) continue;
      if (!node.contains("ColumnRef")) return std::nullopt;
      const json& fields = node["ColumnRef"]["fields"];
      if (fields.size() == 1 && fields[0].contains("String")) {
        const std::string name = fields[0]["String"].value("sval", "");
        if (std::any_of(targets.begin(), targets.end(), [&](const json& t) { return t["ResTarget"].value("name", "") == name; }))
          continue;
      }
      const std::optional<Column> c = r.resolve(node["ColumnRef"]);
      if (!c || !c->preserved || grouped.count(c->index) == 0) return std::nullopt;
    }
  }

  json grouped_other{{"targetList", std::move(sub_targets)},
                     {"fromClause", json::array({*other->range_var})},
                     {"groupClause", json::array({*other_key_node})},
                     {"limitOption", "LIMIT_OPTION_DEFAULT"},
                     {"op", "SETOP_NONE"}};
  if (!other_conditions.empty()) grouped_other["whereClause"] = and_of(std::move(other_conditions));
  // ON preserved key = the subquery's key (the preserved side's column as written).
  json equality{{"A_Expr",
                 {{"kind", "AEXPR_OP"},
                  {"name", json::array({json{{"String", {{"sval", "="}}}}})},
                  {"lexpr", column_ref(preserved->name, preserved_columns[static_cast<size_t>(key->index)].name)},
                  {"rexpr", column_ref(kAlias, kKeyColumn)},
                  {"location", -1}}}};
  json subselect{{"RangeSubselect",
                  {{"subquery", {{"SelectStmt", std::move(grouped_other)}}},
                   {"alias", {{"aliasname", kAlias}}}}}};
  json new_join{{"JoinExpr",
                 {{"jointype", "JOIN_LEFT"},
                  {"larg", *preserved->range_var},
                  {"rarg", std::move(subselect)},
                  {"quals", std::move(equality)}}}};
  json out{{"targetList", std::move(targets)},
           {"fromClause", json::array({std::move(new_join)})},
           {"limitOption", "LIMIT_OPTION_DEFAULT"},
           {"op", "SETOP_NONE"}};
  for (const char* clause : {"whereClause", "sortClause", "limitCount", "limitOffset", "limitOption"}) {
    if (select.contains(clause)) out[clause] = select[clause];
  }
  return out;
}

}  // namespace tally::executor
