#include "executor/dml/insert_on_conflict.hpp"

#include "executor/dml/on_conflict.hpp"
#include "executor/dml/update_delete.hpp"
#include "executor/parser.hpp"
#include "executor/plan_expressions.hpp"
#include "storage/table_store.hpp"

namespace tally::executor::dml {

using nlohmann::json;

namespace {

json column_ref(const std::string& name) {
  return {{"ColumnRef", {{"fields", json::array({{{"String", {{"sval", name}}}}})}}}};
}

// A proposed value as a constant of its column's type (NULL::type for NULL).
json typed_constant(const std::optional<std::string>& value, SqlType type) {
  const json arg = value ? json{{"A_Const", {{"sval", {{"sval", *value}}}}}} : json{{"A_Const", {{"isnull", true}}}};
  const auto parsed = parse_sql_shared("SELECT NULL::" + format_type(type));
  const json& cast = parsed->at(0).body().at("targetList").at(0).at("ResTarget").at("val").at("TypeCast");
  return {{"TypeCast", {{"arg", arg}, {"typeName", cast.at("typeName")}}}};
}

// expr with every EXCLUDED.c replaced by the proposed row's value of c.
json with_excluded(const json& expr, const catalog::TableDef& def, const ProposedRow& row) {
  return replace_column_refs(expr, [&](const json& ref) -> std::optional<json> {
    const json& fields = ref.at("fields");
    if (fields.size() != 2 || !fields[0].contains("String") || fields[0]["String"].value("sval", "") != "excluded" ||
        !fields[1].contains("String")) {
      return std::nullopt;
    }
    const std::string name = fields[1]["String"].value("sval", "");
    const int c = def.find_column(name);
    if (c < 0) throw Error(SqlState::undefined_column, "column excluded." + name + " does not exist");
    return typed_constant(row[static_cast<size_t>(c)], def.columns[static_cast<size_t>(c)].type);
  });
}

json bool_expr(const char* op, json args) {
  return {{"BoolExpr", {{"boolop", op}, {"args", std::move(args)}}}};
}

// The stored row `row` met: its key columns equal to the row's values.
json key_match(const catalog::TableDef& def, const std::vector<int>& key, const ProposedRow& row) {
  json terms = json::array();
  for (const int c : key) {
    const auto& column = def.columns[static_cast<size_t>(c)];
    terms.push_back({{"A_Expr", {{"kind", "AEXPR_OP"},
                                 {"name", json::array({{{"String", {{"sval", "="}}}}})},
                                 {"lexpr", column_ref(column.name)},
                                 {"rexpr", typed_constant(row[static_cast<size_t>(c)], column.type)}}}});
  }
  return terms.size() == 1 ? terms[0] : bool_expr("AND_EXPR", std::move(terms));
}

}  // namespace

bool is_on_conflict_update(const json& stmt) {
  return stmt.contains("onConflictClause") &&
         stmt["onConflictClause"].value("action", std::string()) == "ONCONFLICT_UPDATE";
}

ResultSet update_conflicting(SqlSession& session, const json& stmt, const InsertedRows& inserted,
                             const std::vector<Value>& parameters, StatementContext& ctx, ResultSet appended) {
  if (inserted.conflicting.empty()) return appended;
  const auto snap = resolve_relation(ctx, stmt.at("relation"));
  const catalog::TableDef& def = snap->def;
  const json& clause = stmt.at("onConflictClause");
  json matches = json::array();
  std::vector<json> keys;
  for (const auto& row : inserted.conflicting) {
    keys.push_back(key_match(def, inserted.update_key, row));
    json match = keys.back();
    if (clause.contains("whereClause"))
      match = bool_expr("AND_EXPR", json::array({match, with_excluded(clause["whereClause"], def, row)}));
    matches.push_back(std::move(match));
  }
  json targets = json::array();
  for (const auto& t : clause.value("targetList", json::array())) {
    const json& rt = t.at("ResTarget");
    const std::string name = rt.value("name", std::string());
    if (rt.contains("indirection"))
      throw Error(SqlState::feature_not_supported, "ON CONFLICT DO UPDATE SET (a, b) = ... is not supported by Tally");
    json when = json::array();
    for (size_t i = 0; i < inserted.conflicting.size(); ++i) {
      const json value = rt.at("val").contains("SetToDefault") ? json{{"A_Const", {{"isnull", true}}}}
                                                              : with_excluded(rt.at("val"), def, inserted.conflicting[i]);
      when.push_back({{"CaseWhen", {{"expr", keys[i]}, {"result", value}}}});
    }
    targets.push_back({{"ResTarget", {{"name", name},
                                      {"val", {{"CaseExpr", {{"args", std::move(when)}, {"defresult", column_ref(name)}}}}}}}});
  }
  json update = {{"relation", stmt.at("relation")},
                 {"targetList", std::move(targets)},
                 {"whereClause", matches.size() == 1 ? matches[0] : bool_expr("OR_EXPR", std::move(matches))}};
  if (stmt.contains("returningList")) update["returningList"] = stmt["returningList"];
  ResultSet updated = update_or_delete(session, update, true, parameters, ctx);
  const size_t inserted_rows = inserted.rows.size();
  const size_t updated_rows = std::stoull(updated.tag.substr(updated.tag.rfind(' ') + 1));
  appended.tag = "INSERT 0 " + std::to_string(inserted_rows + updated_rows);
  if (stmt.contains("returningList")) {
    for (size_t c = 0; c < appended.columns.size() && c < updated.columns.size(); ++c)
      for (size_t r = 0; r < updated.rows; ++r) appended.columns[c].push(updated.columns[c].get(r));
    appended.rows += updated.rows;
  }
  return appended;
}

}  // namespace tally::executor::dml
