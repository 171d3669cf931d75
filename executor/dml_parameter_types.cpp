#include "executor/dml_parameter_types.hpp"

#include "common/error.hpp"
#include "executor/binder.hpp"
#include "executor/dml/from_list.hpp"
#include "executor/dml/update_delete.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

// Records type for $number unless the client (or an earlier use) gave one.
void infer(std::vector<uint32_t>& types, int number, SqlType type) {
  if (number < 1) return;
  const auto index = static_cast<size_t>(number - 1);
  if (types.size() <= index) types.resize(index + 1, 0);
  if (types[index] == 0) types[index] = type_oid(type.id);
}

// $n, or $n::type: the type it takes as the value of `column`.
void infer_assigned(std::vector<uint32_t>& types, const json& item, const TableColumn* column) {
  if (item.contains("ParamRef") && column != nullptr) {
    infer(types, item["ParamRef"].value("number", 0), column->type);
  } else if (item.contains("TypeCast") && item["TypeCast"].at("arg").contains("ParamRef")) {
    const json& cast = item["TypeCast"];
    infer(types, cast["arg"]["ParamRef"].value("number", 0), resolve_type_name(cast.at("typeName")));
  }
}

bool mentions_parameter(const json& node) {
  if (node.is_object()) {
    if (node.contains("ParamRef")) return true;
    for (const auto& [key, value] : node.items()) {
      if (mentions_parameter(value)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& value : node) {
      if (mentions_parameter(value)) return true;
    }
  }
  return false;
}

std::shared_ptr<const TableSnapshot> target_table(const json& body, TableProvider& tables) {
  const json& relation = body.at("relation");
  const json& rv = relation.contains("RangeVar") ? relation["RangeVar"] : relation;
  const std::string name = rv.value("relname", "");
  auto table = tables.find_table(rv.value("schemaname", ""), name);
  if (!table) throw Error(SqlState::undefined_table, "relation \"" + name + "\" does not exist");
  return table;
}

// The columns an INSERT writes, in order (nullptr for a name the table lacks:
// execution reports 42703).
std::vector<const TableColumn*> insert_targets(const json& insert, const TableSnapshot& table) {
  const auto& columns = table.columns();
  std::vector<const TableColumn*> targets;
  if (!insert.contains("cols")) {
    for (const auto& column : columns) targets.push_back(&column);
    return targets;
  }
  for (const auto& c : insert["cols"]) {
    const std::string name = c.at("ResTarget").value("name", "");
    const TableColumn* found = nullptr;
    for (const auto& candidate : columns) {
      if (candidate.name == name) found = &candidate;
    }
    targets.push_back(found);
  }
  return targets;
}

}  // namespace

void infer_dml_parameter_types(const std::string& kind, const json& body, TableProvider& tables,
                               PlanContext& pc) {
  if (!mentions_parameter(body) || pc.parameter_types == nullptr) return;
  auto& types = *pc.parameter_types;
  const auto table = target_table(body, tables);
  if (kind == "InsertStmt") {
    if (!body.contains("selectStmt") || !body["selectStmt"].contains("SelectStmt")) return;
    const json& select = body["selectStmt"]["SelectStmt"];
    const auto targets = insert_targets(body, *table);
    if (select.contains("valuesLists")) {
      for (const auto& list : select["valuesLists"]) {
        const json& items = list.at("List").at("items");
        for (size_t i = 0; i < items.size() && i < targets.size(); ++i) infer_assigned(types, items[i], targets[i]);
      }
      return;
    }
    const json targets_list = select.value("targetList", json::array());
    for (size_t i = 0; i < targets_list.size() && i < targets.size(); ++i)
      infer_assigned(types, targets_list[i].at("ResTarget").at("val"), targets[i]);
    plan_select(select, pc);  // the rest from the SELECT's expressions
    return;
  }
  if (kind == "MergeStmt") {
    // SET and INSERT values take their columns' types; the rest comes from
    // one SELECT of every clause's expressions over the target joined with
    // the source.
    const auto& columns = table->columns();
    const auto column_named = [&](const std::string& name) -> const TableColumn* {
      for (const auto& c : columns)
        if (c.name == name) return &c;
      return nullptr;
    };
    json targets = json::array();
    const auto add = [&](const json& value) {
      if (!value.contains("SetToDefault")) targets.push_back({{"ResTarget", {{"val", value}}}});
    };
    for (const auto& c : body.value("mergeWhenClauses", json::array())) {
      const json& w = c.at("MergeWhenClause");
      if (w.contains("condition")) add(w["condition"]);
      const std::string command = w.value("commandType", "");
      if (command == "CMD_UPDATE") {
        for (const auto& t : w.value("targetList", json::array())) {
          const json& rt = t.at("ResTarget");
          infer_assigned(types, rt.at("val"), column_named(rt.value("name", "")));
          add(rt.at("val"));
        }
      } else if (command == "CMD_INSERT") {
        const json names = w.value("targetList", json::array());
        const json values = w.value("values", json::array());
        for (size_t i = 0; i < values.size(); ++i) {
          const TableColumn* column = names.empty() ? (i < columns.size() ? &columns[i] : nullptr)
                                                    : column_named(names.at(i).at("ResTarget").value("name", ""));
          infer_assigned(types, values[i], column);
          add(values[i]);
        }
      }
    }
    if (targets.empty()) targets.push_back({{"ResTarget", {{"val", {{"A_Const", {{"ival", {{"ival", 1}}}}}}}}}});
    json select = {{"targetList", std::move(targets)},
                   {"fromClause", json::array({json{{"RangeVar", body.at("relation")}}, body.at("sourceRelation")})},
                   {"whereClause", body.at("joinCondition")},
                   {"limitOption", "LIMIT_OPTION_DEFAULT"},
                   {"op", "SETOP_NONE"}};
    plan_select(select, pc);
    return;
  }
  if (kind == "UpdateStmt" || kind == "DeleteStmt") {
    const bool is_update = kind == "UpdateStmt";
    const json& relation = body.at("relation");
    const json target_only = dml::without_from_list(
        body, is_update, relation.contains("alias") ? relation["alias"].value("aliasname", "") : relation.value("relname", ""));
    std::map<std::string, json> new_values;
    if (is_update) new_values = dml::set_values(target_only);
    plan_select(dml::matched_rows_select(target_only, table->columns(), new_values), pc);
  }
}

}  // namespace tally::executor
