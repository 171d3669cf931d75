#include "executor/dependent_group_columns.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "executor/binder.hpp"
#include "executor/dml/parse_nodes.hpp"
#include "executor/from_table.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {
namespace {

using json = nlohmann::json;
using dml::column_ref;
using dml::res_target;

// The names the rewrite adds: not names a user writes (a table with a
// column named tally_... is left as written).
constexpr const char* kGrouped = "tally_grouped";
const std::string kOutput = "tally_output_", kKey = "tally_key_", kSort = "tally_sort_", kRow = "tally_row_";

struct Column {
  size_t table = 0;  // index into the FROM list
  int index = -1;
};

std::string text(const json& field) { return field.contains("String") ? field["String"].value("sval", "") : ""; }

class FromList {
 public:
  explicit FromList(std::vector<FromTable> tables) : tables_(std::move(tables)) {}
  const std::vector<FromTable>& tables() const { return tables_; }

  // The column a ColumnRef names: one of exactly one table, by its name
  // alone or with its table's name or alias.
  std::optional<Column> resolve(const json& ref) const {
    const json& fields = ref.value("fields", json::array());
    std::optional<Column> found;
    if (fields.size() == 1 && fields[0].contains("String")) {
      for (size_t t = 0; t < tables_.size(); ++t) {
        const int c = tables_[t].column(text(fields[0]));
        if (c < 0) continue;
        if (found) return std::nullopt;  // ambiguous: the planner says so
        found = Column{t, c};
      }
      return found;
    }
    if (fields.size() == 2 && fields[0].contains("String") && fields[1].contains("String")) {
      for (size_t t = 0; t < tables_.size(); ++t) {
        if (tables_[t].name != text(fields[0])) continue;
        const int c = tables_[t].column(text(fields[1]));
        if (c < 0 || found) return std::nullopt;
        found = Column{t, c};
      }
    }
    return found;
  }

  // Whether `node` reads a column of `columns` outside an aggregate's
  // arguments, or a column this list does not resolve.
  bool reads_outside_aggregates(const json& node, const std::set<std::pair<size_t, int>>& columns) const {
    if (node.is_array()) {
      return std::any_of(node.begin(), node.end(), [&](const json& v) { return reads_outside_aggregates(v, columns); });
    }
    if (!node.is_object()) return false;
    if (node.contains("ColumnRef")) {
      const std::optional<Column> c = resolve(node["ColumnRef"]);
      return !c || columns.count({c->table, c->index}) > 0;
    }
    if (node.contains("FuncCall")) {
      const json& f = node["FuncCall"];
      const json& names = f["funcname"];
      if (!f.contains("over") && !names.empty() && is_aggregate_name(text(names[names.size() - 1]))) return false;
    }
    for (const auto& [key, value] : node.items()) {
      if (reads_outside_aggregates(value, columns)) return true;
    }
    return false;
  }

 private:
  std::vector<FromTable> tables_;
};

// Whether `node` holds a subquery, a window call or GROUPING(): what the
// rewrite does not move between the two levels.
bool moves_badly(const json& node) {
  if (node.is_array()) return std::any_of(node.begin(), node.end(), moves_badly);
  if (!node.is_object()) return false;
  if (node.contains("SubLink") || node.contains("GroupingFunc") || node.contains("A_Star")) return true;
  if (node.contains("FuncCall") && node["FuncCall"].contains("over")) return true;
  for (const auto& [key, value] : node.items()) {
    if (moves_badly(value)) return true;
  }
  return false;
}

std::string output_name(const json& target) {
  const json& rt = target["ResTarget"];
  return rt.contains("name") ? rt["name"].get<std::string>() : output_column_name(rt["val"]);
}

// The expression an ORDER BY item sorts by: a position's or an output
// name's target (as PostgreSQL resolves a bare name), else the item's own.
std::optional<json> sort_expression(const json& node, const json& targets) {
  if (node.contains("A_Const")) {
    if (!node["A_Const"].contains("ival")) return std::nullopt;
    const int64_t at = node["A_Const"]["ival"].value("ival", int64_t{0});
    if (at < 1 || at > static_cast<int64_t>(targets.size())) return std::nullopt;
    return targets[static_cast<size_t>(at - 1)]["ResTarget"]["val"];
  }
  if (node.contains("ColumnRef") && node["ColumnRef"]["fields"].size() == 1) {
    const std::string name = text(node["ColumnRef"]["fields"][0]);
    const json* named = nullptr;
    for (const json& t : targets) {
      if (output_name(t) != name) continue;
      if (named != nullptr) return std::nullopt;  // ambiguous: the planner says so
      named = &t["ResTarget"]["val"];
    }
    if (named != nullptr) return *named;
  }
  return node;
}

}  // namespace

std::optional<json> dependent_group_columns(const json& select, const PlanContext& pc) {
  for (const char* clause : {"distinctClause", "windowClause", "withClause", "lockingClause", "intoClause", "valuesLists"}) {
    if (select.contains(clause)) return std::nullopt;
  }
  if (pc.outer_column || select.value("op", "SETOP_NONE") != "SETOP_NONE" || !select.contains("fromClause") ||
      !select.contains("groupClause") || !select.contains("targetList") || !select.contains("sortClause") ||
      !select.contains("limitCount")) {
    return std::nullopt;
  }
  const json& limit = select["limitCount"];
  if ((limit.contains("A_Const") && limit["A_Const"].value("isnull", false)) ||
      select.value("limitOption", "LIMIT_OPTION_DEFAULT") == "LIMIT_OPTION_WITH_TIES") {
    return std::nullopt;
  }
  std::vector<FromTable> tables;
  for (const json& item : select["fromClause"]) {
    std::optional<FromTable> t = from_table(item, pc);
    if (!t) return std::nullopt;
    for (const TableColumn& c : t->table->columns()) {
      if (c.name.rfind("tally_", 0) == 0) return std::nullopt;
    }
    tables.push_back(std::move(*t));
  }
  const FromList from(std::move(tables));

  // GROUP BY: columns of the FROM list's tables.
  std::vector<std::set<int>> grouped(from.tables().size());
  for (const json& g : select["groupClause"]) {
    if (!g.contains("ColumnRef")) return std::nullopt;
    const std::optional<Column> c = from.resolve(g["ColumnRef"]);
    if (!c) return std::nullopt;
    grouped[c->table].insert(c->index);
  }
  const json& targets = select["targetList"];
  std::vector<json> sorts;
  for (const json& item : select["sortClause"]) {
    if (!item.contains("SortBy") || item["SortBy"].contains("useOp")) return std::nullopt;
    std::optional<json> e = sort_expression(item["SortBy"]["node"], targets);
    if (!e) return std::nullopt;
    sorts.push_back(std::move(*e));
  }
  if (moves_badly(targets) || moves_badly(sorts) || (select.contains("havingClause") && moves_badly(select["havingClause"]))) {
    return std::nullopt;
  }

  // Per table: the smallest unique key of NOT NULL columns that is grouped,
  // and its other grouped columns (those it determines), where no ORDER BY,
  // HAVING or target other than the column itself reads them.
  std::vector<std::vector<int>> keys(from.tables().size());
  std::set<std::pair<size_t, int>> dependent;
  for (size_t t = 0; t < from.tables().size(); ++t) {
    const auto& columns = from.tables()[t].table->columns();
    for (const std::vector<int>& unique : from.tables()[t].table->unique_keys()) {
      const bool grouped_key = !unique.empty() && std::all_of(unique.begin(), unique.end(), [&](int c) {
        return grouped[t].count(c) > 0 && columns[static_cast<size_t>(c)].not_null;
      });
      if (grouped_key && (keys[t].empty() || unique.size() < keys[t].size())) keys[t] = unique;
    }
    if (keys[t].empty()) continue;
    std::set<std::pair<size_t, int>> mine;
    for (const int c : grouped[t]) {
      if (std::find(keys[t].begin(), keys[t].end(), c) == keys[t].end()) mine.insert({t, c});
    }
    if (mine.empty()) continue;
    bool read = from.reads_outside_aggregates(sorts, mine) ||
                (select.contains("havingClause") && from.reads_outside_aggregates(select["havingClause"], mine));
    for (const json& target : targets) {
      const json& value = target["ResTarget"]["val"];
      if (value.contains("ColumnRef")) {
        const std::optional<Column> c = from.resolve(value["ColumnRef"]);
        if (c && mine.count({c->table, c->index}) > 0) continue;  // fetched
      }
      read = read || from.reads_outside_aggregates(value, mine);
    }
    if (!read) dependent.insert(mine.begin(), mine.end());
  }
  if (dependent.empty()) return std::nullopt;
  std::set<size_t> fetched_from;
  for (const auto& [t, c] : dependent) fetched_from.insert(t);

  // The grouped query, without the dependent columns: the keys of the
  // tables they come from, the targets that are not one of them, the sort
  // expressions.
  json inner_targets = json::array();
  for (const size_t t : fetched_from) {
    const FromTable& table = from.tables()[t];
    for (size_t j = 0; j < keys[t].size(); ++j) {
      const std::string column = table.table->columns()[static_cast<size_t>(keys[t][j])].name;
      inner_targets.push_back(res_target(column_ref({table.name, column}), kKey + std::to_string(t) + "_" + std::to_string(j)));
    }
  }
  json outer_targets = json::array();
  for (size_t i = 0; i < targets.size(); ++i) {
    const json& value = targets[i]["ResTarget"]["val"];
    if (value.contains("ColumnRef")) {
      const std::optional<Column> c = from.resolve(value["ColumnRef"]);
      if (c && dependent.count({c->table, c->index}) > 0) {
        const std::string column = from.tables()[c->table].table->columns()[static_cast<size_t>(c->index)].name;
        outer_targets.push_back(res_target(column_ref({kRow + std::to_string(c->table), column}), output_name(targets[i])));
        continue;
      }
    }
    inner_targets.push_back(res_target(value, kOutput + std::to_string(i)));
    outer_targets.push_back(res_target(column_ref({kGrouped, kOutput + std::to_string(i)}), output_name(targets[i])));
  }
  json inner_sorts = json::array(), outer_sorts = json::array();
  for (size_t j = 0; j < sorts.size(); ++j) {
    const std::string name = kSort + std::to_string(j);
    inner_targets.push_back(res_target(sorts[j], name));
    json inner_item = select["sortClause"][j];
    inner_item["SortBy"]["node"] = column_ref({name});
    inner_sorts.push_back(std::move(inner_item));
    json outer_item = select["sortClause"][j];
    outer_item["SortBy"]["node"] = column_ref({kGrouped, name});
    outer_sorts.push_back(std::move(outer_item));
  }
  json group = json::array();
  for (const json& g : select["groupClause"]) {
    const std::optional<Column> c = from.resolve(g["ColumnRef"]);
    if (dependent.count({c->table, c->index}) == 0) group.push_back(g);
  }
  json inner = select;
  inner["targetList"] = std::move(inner_targets);
  inner["groupClause"] = std::move(group);
  inner["sortClause"] = std::move(inner_sorts);

  // Each group's row of every table it fetches from, by that table's key.
  json outer_from = json::array(
      {json{{"RangeSubselect", {{"subquery", {{"SelectStmt", std::move(inner)}}}, {"alias", {{"aliasname", kGrouped}}}}}}});
  std::vector<json> conditions;
  for (const size_t t : fetched_from) {
    const FromTable& table = from.tables()[t];
    json again = *table.range_var;
    again["RangeVar"]["alias"] = {{"aliasname", kRow + std::to_string(t)}};
    outer_from.push_back(std::move(again));
    for (size_t j = 0; j < keys[t].size(); ++j) {
      const std::string column = table.table->columns()[static_cast<size_t>(keys[t][j])].name;
      conditions.push_back(dml::operator_expr("=", column_ref({kRow + std::to_string(t), column}),
                                    column_ref({kGrouped, kKey + std::to_string(t) + "_" + std::to_string(j)})));
    }
  }
  json outer{{"targetList", std::move(outer_targets)},
             {"fromClause", std::move(outer_from)},
             {"sortClause", std::move(outer_sorts)},
             {"limitOption", "LIMIT_OPTION_DEFAULT"},
             {"op", "SETOP_NONE"}};
  outer["whereClause"] = dml::and_of(std::move(conditions));
  return outer;
}

}  // namespace tally::executor
