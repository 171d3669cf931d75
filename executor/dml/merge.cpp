#include "executor/dml/merge.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "common/error.hpp"
#include "executor/dml/from_list.hpp"
#include "executor/dml/parse_nodes.hpp"
#include "executor/dml/result_append.hpp"
#include "executor/dml/update_delete.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/table_provider.hpp"
#include "storage/table_appender.hpp"

namespace tally::executor::dml {

using nlohmann::json;

namespace {

// The output column of the rewritten rows that holds each row's clause
// number; not a name a table column can take by accident.
constexpr const char* kClauseColumn = "tally merge clause";

json true_const() { return {{"A_Const", {{"boolval", {{"boolval", true}}}}}}; }

json bool_expr(const char* op, json args) { return {{"BoolExpr", {{"boolop", op}, {"args", std::move(args)}}}}; }
json is_true(json arg, const char* test) { return {{"BooleanTest", {{"arg", std::move(arg)}, {"booltesttype", test}}}}; }

struct Clause {
  std::string command;  // CMD_UPDATE, CMD_DELETE, CMD_INSERT, CMD_NOTHING
  const json* node = nullptr;
  json condition;       // true where the clause has none
};

// The clauses of one kind in order; 42601 for a clause after an
// unconditional one of its kind, as PostgreSQL's parser.
std::vector<Clause> clauses_of(const json& stmt, bool matched) {
  std::vector<Clause> out;
  bool unconditional = false;
  if (!stmt.contains("mergeWhenClauses")) return out;
  for (const json& c : stmt["mergeWhenClauses"]) {  // a reference: `node` points into it
    const json& w = c.at("MergeWhenClause");
    if (w.value("matched", false) != matched) continue;
    if (unconditional) throw Error(SqlState::syntax_error, "unreachable WHEN clause specified after unconditional WHEN clause");
    if (w.value("override", "OVERRIDING_NOT_SET") != "OVERRIDING_NOT_SET")
      throw Error(SqlState::feature_not_supported, "OVERRIDING in MERGE is not supported by Tally");
    unconditional = !w.contains("condition");
    out.push_back({w.value("commandType", ""), &w, w.contains("condition") ? w["condition"] : true_const()});
  }
  return out;
}

}  // namespace

ResultSet merge(SqlSession& session, const json& stmt, const std::vector<Value>& parameters, StatementContext& ctx) {
  if (stmt.contains("withClause")) throw Error(SqlState::feature_not_supported, "WITH in MERGE is not supported by Tally");
  const json& relation = stmt.at("relation");
  if (!relation.value("inh", true)) throw Error(SqlState::feature_not_supported, "MERGE ONLY is not supported by Tally");
  const auto resolved = resolve_relation(ctx, relation);
  const std::string& table_name = resolved->def.name;
  const std::string alias = relation.contains("alias") ? relation["alias"].value("aliasname", table_name) : table_name;
  const json list = json::array({stmt.at("sourceRelation")});
  refuse_target_named_again(list, alias);
  const json& on = stmt.at("joinCondition");
  const std::vector<Clause> matched = clauses_of(stmt, true), not_matched = clauses_of(stmt, false);

  // Names of both the target and the source are ambiguous where both are
  // in scope: the join condition and the WHEN MATCHED clauses.
  std::vector<std::string> target_columns, source_columns;
  for (const auto& col : resolved->def.columns) target_columns.push_back(col.name);
  for (const auto& f : run_select_body(session, from_list_columns_select(list), parameters, ctx).fields)
    source_columns.push_back(f.name);
  std::vector<const json*> named{&on};
  for (const Clause& c : matched) {
    named.push_back(&c.condition);
    if (c.node->contains("targetList")) named.push_back(&(*c.node)["targetList"]);
  }
  if (const auto name = ambiguous_name(named, target_columns, source_columns))
    throw std::move(Error(SqlState::ambiguous_column, "column reference \"" + name->first + "\" is ambiguous")
                        .with_position(ctx.position(name->second)));

  auto appender = ctx.begin_append(resolved->def.oid);
  const catalog::TableDef& def = appender->table();
  std::vector<TableColumn> columns;
  std::vector<int> all_columns;
  for (size_t c = 0; c < def.columns.size(); ++c) {
    columns.push_back({def.columns[c].name, def.columns[c].type, def.columns[c].not_null});
    all_columns.push_back(static_cast<int>(c));
  }
  const json target_item = {{"RangeVar", relation}};
  uint64_t changed = 0;

  // WHEN MATCHED: each target row's clause, then the table's rows after it.
  std::optional<ResultSet> rewritten;
  const bool acts = std::any_of(matched.begin(), matched.end(), [](const Clause& c) { return c.command != "CMD_NOTHING"; });
  if (acts) {
    const json twice = {{"A_Expr", {{"kind", "AEXPR_OP"}, {"name", json::array({{{"String", {{"sval", ">"}}}}})},
                                    {"lexpr", sublink("EXPR_SUBLINK", {{"FuncCall", {{"funcname", json::array({{{"String", {{"sval", "count"}}}}})},
                                                                                      {"agg_star", true},
                                                                                      {"funcformat", "COERCE_EXPLICIT_CALL"}}}},
                                                      list, &on)},
                                    {"rexpr", int_const(1)}}}};
    json probe = select_stmt(json::array({res_target(int_const(1))}), json::array({target_item}), &twice);
    probe["limitCount"] = int_const(1);
    probe["limitOption"] = "LIMIT_OPTION_COUNT";
    if (run_select_body(session, probe, parameters, ctx).rows > 0)
      throw std::move(Error(SqlState::cardinality_violation, "MERGE command cannot affect row a second time")
                          .with_hint("Ensure that not more than one source row matches any one target row."));
    json whens = json::array();
    for (size_t i = 0; i < matched.size(); ++i)
      whens.push_back({{"CaseWhen", {{"expr", matched[i].condition}, {"result", int_const(static_cast<int64_t>(i) + 1)}}}});
    const json which = {{"CaseExpr", {{"args", std::move(whens)}, {"defresult", int_const(0)}}}};
    // SELECT t.*, <clause> FROM t: the rows with their clause numbers,
    // under the target's own name, so the SET values read them as t.
    json rows = select_stmt(json::array({res_target(column_ref({alias, "*"})), res_target(least_over(which, list, &on), kClauseColumn)}),
                            json::array({target_item}), nullptr);
    rows["targetList"][0]["ResTarget"]["val"]["ColumnRef"]["fields"][1] = {{"A_Star", json::object()}};
    const json numbered = {{"RangeSubselect", {{"subquery", {{"SelectStmt", std::move(rows)}}}, {"alias", {{"aliasname", alias}}}}}};
    json outputs = json::array();
    for (const auto& col : def.columns) {
      json whens_c = json::array();
      for (size_t i = 0; i < matched.size(); ++i) {
        if (matched[i].command != "CMD_UPDATE") continue;
        for (const json& t : matched[i].node->at("targetList")) {
          const json& rt = t.at("ResTarget");
          if (rt.value("name", "") != col.name) continue;
          if (rt.contains("indirection") || rt.at("val").contains("MultiAssignRef"))
            throw Error(SqlState::feature_not_supported, "this form of SET is not supported by Tally");
          const json& value = rt.at("val");
          json v = value.contains("SetToDefault") ? json{{"A_Const", {{"isnull", true}}}} : value;
          whens_c.push_back({{"CaseWhen", {{"expr", {{"A_Expr", {{"kind", "AEXPR_OP"}, {"name", json::array({{{"String", {{"sval", "="}}}}})},
                                                                  {"lexpr", column_ref({kClauseColumn})}, {"rexpr", int_const(static_cast<int64_t>(i) + 1)}}}}},
                                           {"result", cast_to(names_a_column(v) ? least_over(v, list, &on) : v, col.type)}}}});
        }
      }
      outputs.push_back(whens_c.empty() ? res_target(column_ref({col.name}), col.name)
                                        : res_target({{"CaseExpr", {{"args", std::move(whens_c)}, {"defresult", column_ref({col.name})}}}}, col.name));
    }
    outputs.push_back(res_target(column_ref({kClauseColumn}), kClauseColumn));
    ResultSet after = run_select_body(session, select_stmt(std::move(outputs), json::array({numbered}), nullptr), parameters, ctx);
    // Deleted rows dropped, the clause column counted and dropped.
    const Vector& clause = after.columns.back();
    std::vector<uint32_t> kept;
    for (size_t r = 0; r < after.rows; ++r) {
      const int64_t k = clause.null_at(r) ? 0 : clause.ints[r];
      const std::string& command = k > 0 ? matched[static_cast<size_t>(k - 1)].command : std::string("CMD_NOTHING");
      if (command != "CMD_NOTHING") ++changed;
      if (command != "CMD_DELETE") kept.push_back(static_cast<uint32_t>(r));
    }
    after.columns.pop_back();
    after.fields.pop_back();
    if (changed > 0) {
      if (kept.size() < after.rows) {
        for (Vector& v : after.columns) v = gather(v, kept);
        after.rows = kept.size();
      }
      check_assignable(after, all_columns, columns);
      rewritten = std::move(after);
    }
  }

  // WHEN NOT MATCHED: the source rows no target row joins, each clause's
  // after the rows an earlier clause took.
  std::vector<std::pair<ResultSet, std::vector<int>>> inserts;
  json unmatched = bool_expr("NOT_EXPR", json::array({sublink("EXISTS_SUBLINK", int_const(1), json::array({target_item}), &on)}));
  json earlier;
  for (const Clause& c : not_matched) {
    json where = bool_expr("AND_EXPR", json::array({unmatched, is_true(c.condition, "IS_TRUE")}));
    if (!earlier.is_null()) where["BoolExpr"]["args"].push_back(is_true(earlier, "IS_NOT_TRUE"));
    earlier = earlier.is_null() ? c.condition : bool_expr("OR_EXPR", json::array({earlier, c.condition}));
    if (c.command != "CMD_INSERT") continue;
    std::vector<int> targets;
    json values = json::array();
    const json names = c.node->value("targetList", json::array());
    const json items = c.node->value("values", json::array());
    if (!names.empty() && names.size() != items.size())
      throw Error(SqlState::syntax_error, names.size() > items.size() ? "INSERT has more target columns than expressions"
                                                                       : "INSERT has more expressions than target columns");
    if (names.empty() && items.size() > def.columns.size())
      throw Error(SqlState::syntax_error, "INSERT has more expressions than target columns");
    for (size_t k = 0; k < items.size(); ++k) {
      const std::string name = names.empty() ? def.columns[k].name : names[k].at("ResTarget").value("name", "");
      const int index = def.find_column(name);
      if (index < 0)
        throw Error(SqlState::undefined_column, "column \"" + name + "\" of relation \"" + table_name + "\" does not exist");
      if (items[k].contains("SetToDefault")) continue;  // its DEFAULT, as a column left out
      const bool untyped = items[k].contains("A_Const") || items[k].contains("ParamRef");
      values.push_back(res_target(untyped ? cast_to(items[k], def.columns[static_cast<size_t>(index)].type) : items[k]));
      targets.push_back(index);
    }
    const bool none = values.empty();
    if (none) values.push_back(res_target(int_const(1)));  // DEFAULT VALUES: one row per source row
    ResultSet rows = run_select_body(session, select_stmt(std::move(values), list, &where), parameters, ctx);
    if (none) {
      rows.columns.clear();
      rows.fields.clear();
    }
    add_default_columns(ctx, table_name, rows, targets);
    check_assignable(rows, targets, columns);
    changed += rows.rows;
    inserts.emplace_back(std::move(rows), std::move(targets));
  }

  if (changed > 0) {
    ctx.check_cancel();
    if (rewritten) {
      appender->replace_all_chunks();
      append_result_rows(*appender, *rewritten, all_columns, columns, table_name);
    }
    for (const auto& [rows, targets] : inserts) append_result_rows(*appender, rows, targets, columns, table_name);
    ctx.check_cancel();
    appender->commit();
  }
  ResultSet r;
  r.tag = "MERGE " + std::to_string(changed);
  r.returns_rows = false;
  return r;
}

}  // namespace tally::executor::dml
