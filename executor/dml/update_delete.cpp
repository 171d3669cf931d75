#include "executor/dml/update_delete.hpp"

#include <map>

#include "executor/dml/from_list.hpp"
#include "executor/dml/parse_nodes.hpp"
#include "executor/dml/result_append.hpp"
#include "executor/parser.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan.hpp"
#include "executor/sql_session.hpp"
#include "executor/table_provider.hpp"
#include "storage/table_appender.hpp"

namespace tally::executor::dml {

using nlohmann::json;

namespace {

// SELECT <targets> FROM <relation> [WHERE <where>].
json select_of(const json& relation, json targets, const json* where) {
  return select_stmt(std::move(targets), json::array({{{"RangeVar", relation}}}), where);
}

// The column a ColumnRef names when it is a column of the target table
// (unqualified, or qualified by its name or alias); empty otherwise.
std::string target_column(const json& ref, const std::string& table_name) {
  const json& fields = ref.at("fields");
  if (fields.empty() || fields.size() > 2 || !fields.back().contains("String")) return {};
  if (fields.size() == 2 && (!fields[0].contains("String") || fields[0]["String"].value("sval", "") != table_name))
    return {};
  return fields.back()["String"].value("sval", "");
}

// A copy of `expr` in which every reference to an updated column is that
// column's new value (RETURNING shows the row as updated).
json substitute(const json& expr, const std::map<std::string, json>& new_values, const std::string& table_name) {
  return replace_column_refs(expr, [&](const json& ref) -> std::optional<json> {
    const std::string column = target_column(ref, table_name);
    if (auto v = new_values.find(column); !column.empty() && v != new_values.end()) return v->second;
    return std::nullopt;
  });
}

bool is_star(const json& value) {
  if (!value.contains("ColumnRef")) return false;
  const json& fields = value["ColumnRef"].at("fields");
  return !fields.empty() && fields.back().contains("A_Star");
}

void refuse_unsupported(const json& stmt, bool is_update, const StatementContext& ctx) {
  const char* what = is_update ? "UPDATE" : "DELETE";
  if (stmt.contains("withClause"))
    throw Error(SqlState::feature_not_supported, std::string("WITH in ") + what + " is not supported by Tally");
  if (stmt.contains("whereClause") && stmt["whereClause"].contains("CurrentOfExpr"))
    throw Error(SqlState::feature_not_supported, "WHERE CURRENT OF is not supported by Tally");
  if (!stmt.at("relation").value("inh", true))
    throw Error(SqlState::feature_not_supported, std::string(what) + " ONLY is not supported by Tally");
  (void)ctx;
}

}  // namespace

ResultSet run_select_body(SqlSession& session, const json& select, const std::vector<Value>& parameters,
                          const StatementContext& ctx) {
  // The parameters' types as the statement's analysis inferred them.
  std::vector<uint32_t> types;
  for (const auto& p : ctx.parameters) types.push_back(type_oid(p.type.id));
  PlanContext pc = session.make_plan_context(&types);
  auto plan = plan_select(select, pc);
  ExecContext ec = session.make_exec_context(&parameters);
  return run_select(*plan, ec);
}

json cast_to(const json& value, SqlType type) {
  const auto parsed = parse_sql_shared("SELECT NULL::" + format_type(type));
  const json& cast = parsed->at(0).body().at("targetList").at(0).at("ResTarget").at("val").at("TypeCast");
  return {{"TypeCast", {{"arg", value}, {"typeName", cast.at("typeName")}}}};
}

json matched_rows_select(const json& stmt, const std::vector<TableColumn>& columns,
                         const std::map<std::string, json>& new_values) {
  json new_row = json::array();
  for (const auto& col : columns) {
    auto v = new_values.find(col.name);
    json value = v != new_values.end() ? v->second : column_ref({col.name});
    // A bare literal (a quoted date, NULL) or an untyped parameter takes the
    // column's type, as an untyped constant does in PostgreSQL's UPDATE.
    if (value.contains("A_Const") || value.contains("ParamRef")) value = cast_to(value, col.type);
    new_row.push_back(res_target(std::move(value), col.name));
  }
  return select_of(stmt.at("relation"), std::move(new_row),
                   stmt.contains("whereClause") ? &stmt["whereClause"] : nullptr);
}

std::map<std::string, json> set_values(const json& stmt) {
  std::map<std::string, json> new_values;
  for (const auto& t : stmt.value("targetList", json::array())) {
    const json& rt = t.at("ResTarget");
    const json& value = rt.at("val");
    new_values[rt.value("name", "")] = value.contains("SetToDefault") ? json{{"A_Const", {{"isnull", true}}}} : value;
  }
  return new_values;
}

ResultSet update_or_delete(SqlSession& session, const json& given, bool is_update, const std::vector<Value>& parameters,
                           StatementContext& ctx) {
  refuse_unsupported(given, is_update, ctx);
  const json& relation = given.at("relation");
  const auto resolved = resolve_relation(ctx, relation);
  const std::string& table_name = resolved->def.name;
  const std::string alias =
      relation.contains("alias") ? relation["alias"].value("aliasname", table_name) : table_name;
  const json& list = from_list(given, is_update);
  if (!list.empty()) {
    std::vector<std::string> target_columns, list_columns;
    for (const auto& col : resolved->def.columns) target_columns.push_back(col.name);
    for (const auto& f : run_select_body(session, from_list_columns_select(list), parameters, ctx).fields)
      list_columns.push_back(f.name);
    std::vector<const json*> named;
    if (given.contains("whereClause")) named.push_back(&given["whereClause"]);
    if (is_update) named.push_back(&given.at("targetList"));
    if (given.contains("returningList")) named.push_back(&given["returningList"]);
    if (const auto name = ambiguous_name(named, target_columns, list_columns))
      throw std::move(Error(SqlState::ambiguous_column, "column reference \"" + name->first + "\" is ambiguous")
                          .with_position(ctx.position(name->second)));
  }
  const json stmt = without_from_list(given, is_update, alias);

  // SET targets: the new value of each updated column.
  std::map<std::string, json> new_values;
  if (is_update) {
    for (const auto& t : stmt.at("targetList")) {
      const json& rt = t.at("ResTarget");
      const std::string name = rt.value("name", "");
      const int location = rt.value("location", -1);
      if (rt.contains("indirection") || rt.at("val").contains("MultiAssignRef"))
        throw std::move(Error(SqlState::feature_not_supported, "this form of SET is not supported by Tally")
                            .with_position(ctx.position(location)));
      if (resolved->def.find_column(name) < 0)
        throw std::move(Error(SqlState::undefined_column,
                              "column \"" + name + "\" of relation \"" + table_name + "\" does not exist")
                            .with_position(ctx.position(location)));
      if (new_values.count(name))
        throw std::move(Error(SqlState::syntax_error, "multiple assignments to same column \"" + name + "\"")
                            .with_position(ctx.position(location)));
      const json& value = rt.at("val");
      new_values[name] = value.contains("SetToDefault") ? json{{"A_Const", {{"isnull", true}}}} : value;
    }
  }

  // The write lock first (taken by the appender, or held by the block), so
  // the rows read below are the table's rows until this commits.
  auto appender = ctx.begin_append(resolved->def.oid);
  const catalog::TableDef& def = appender->table();
  std::vector<TableColumn> columns;
  std::vector<int> all_columns;
  for (size_t c = 0; c < def.columns.size(); ++c) {
    const auto& col = def.columns[c];
    columns.push_back({col.name, col.type, col.not_null});
    all_columns.push_back(static_cast<int>(c));
  }
  const json* where = stmt.contains("whereClause") ? &stmt["whereClause"] : nullptr;
  // What RETURNING reads for an updated column: its new value in the column's type.
  std::map<std::string, json> returned_values;
  for (const auto& [name, value] : new_values)
    returned_values[name] = cast_to(value, def.columns[static_cast<size_t>(def.find_column(name))].type);

  // The matched rows: their new versions (UPDATE) or just their count (DELETE).
  ResultSet matched =
      run_select_body(session, matched_rows_select(stmt, columns, new_values), parameters, ctx);
  if (is_update) check_assignable(matched, all_columns, columns);
  ResultSet returning;
  if (stmt.contains("returningList")) {
    json targets = json::array();
    for (const auto& t : stmt["returningList"]) {
      const json& rt = t.at("ResTarget");
      if (is_star(rt.at("val"))) {
        for (const auto& col : def.columns) {
          auto v = returned_values.find(col.name);
          targets.push_back(res_target(v != returned_values.end() ? v->second : column_ref({col.name}), col.name));
        }
        continue;
      }
      json item = rt;
      item["val"] = substitute(rt.at("val"), returned_values, alias);
      if (!item.contains("name") && rt.at("val").contains("ColumnRef")) {
        // The column's name, as PostgreSQL names a returned column.
        item["name"] = rt["val"]["ColumnRef"]["fields"].back()["String"].value("sval", "?column?");
      }
      targets.push_back({{"ResTarget", item}});
    }
    returning = run_select_body(session, select_of(relation, targets, where), parameters, ctx);
  }
  const std::string tag = std::string(is_update ? "UPDATE " : "DELETE ") + std::to_string(matched.rows);
  if (matched.rows > 0) {
    ctx.check_cancel();
    // An EXISTS (a FROM or USING list's) is never NULL: NOT EXISTS, which
    // plans as an anti join, where IS NOT TRUE would run it per row.
    const bool exists = where && where->contains("SubLink") && (*where)["SubLink"].value("subLinkType", "") == "EXISTS_SUBLINK";
    json unmatched_where =
        exists ? json{{"BoolExpr", {{"boolop", "NOT_EXPR"}, {"args", json::array({*where})}}}}
               : json{{"BooleanTest", {{"arg", where ? *where : json{{"A_Const", {{"boolval", {{"boolval", true}}}}}}},
                                       {"booltesttype", "IS_NOT_TRUE"}}}};
    const ResultSet kept = run_select_body(
        session, select_of(relation, json::array({res_target({{"ColumnRef", {{"fields", json::array({{{"A_Star", json::object()}}})}}}})}), &unmatched_where),
        parameters, ctx);
    appender->replace_all_chunks();
    append_result_rows(*appender, kept, all_columns, columns, table_name);
    if (is_update) append_result_rows(*appender, matched, all_columns, columns, table_name);
    ctx.check_cancel();
    appender->commit();
  }
  if (!stmt.contains("returningList")) {
    ResultSet r;
    r.tag = tag;
    r.returns_rows = false;
    return r;
  }
  returning.tag = tag;
  return returning;
}

}  // namespace tally::executor::dml
