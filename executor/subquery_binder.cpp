#include "executor/subquery_binder.hpp"

#include <map>

#include "common/error.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/project_set.hpp"
#include "executor/row_comparison.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/subquery_expr.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

std::vector<std::string> reference_parts(const json& column_ref) {
  std::vector<std::string> parts;
  for (const auto& f : column_ref["ColumnRef"]["fields"]) {
    if (!f.contains("String")) return {};
    parts.push_back(f["String"].value("sval", ""));
  }
  return parts;
}

// The comparison `l op r` over a two-column input [l, r], bound by the binder
// so that the operator's type rules (common type, casts) apply.
ExprPtr bind_comparison(const std::string& op, SqlType left, SqlType right, const BindContext& base) {
  BindContext context;
  context.parameter_types = base.parameter_types;
  context.settings = base.settings;
  context.columns = {{"l", left}, {"r", right}};
  auto ref = [](const char* name) { return json{{"ColumnRef", {{"fields", json::array({json{{"String", {{"sval", name}}}}})}}}}; };
  const json node = {{"A_Expr",
                      {{"kind", "AEXPR_OP"},
                       {"name", json::array({json{{"String", {{"sval", op}}}}})},
                       {"lexpr", ref("l")},
                       {"rexpr", ref("r")}}}};
  return bind_condition(node, context, "ANY/ALL");
}

// `(l0, l1, ...) op (r0, r1, ...)` over an input [l0 .. ln-1, r0 .. rn-1]: a
// row compared with each of a subquery's rows (row_comparison.hpp).
ExprPtr bind_row_comparison(const std::string& op, const std::vector<SqlType>& left, const std::vector<SqlType>& right,
                            const BindContext& base) {
  BindContext context;
  context.parameter_types = base.parameter_types;
  context.settings = base.settings;
  auto named = [](char side, size_t i) {
    std::string name(1, side);
    name += std::to_string(i);
    return name;
  };
  for (size_t i = 0; i < left.size(); ++i) context.columns.push_back({named('l', i), left[i]});
  for (size_t i = 0; i < right.size(); ++i) context.columns.push_back({named('r', i), right[i]});
  auto side = [&context, named](char prefix) -> RowElement {
    return [&context, named, prefix](size_t i) {
      const std::string name = named(prefix, i);
      return bind_expression(json{{"ColumnRef", {{"fields", json::array({json{{"String", {{"sval", name}}}}})}}}},
                             context);
    };
  };
  return make_row_comparison(op, side('l'), left.size(), side('r'), right.size(), context);
}

}  // namespace

ExprPtr try_bind_column(const json& column_ref, BindContext& context) {
  const std::vector<std::string> parts = reference_parts(column_ref);
  if (parts.empty()) return nullptr;
  if (context.relations != nullptr) {
    const int index = context.relations->resolve(parts, true);
    if (index >= 0) {
      for (const auto& c : context.relations->columns()) {
        if (c.index == index) return std::make_unique<ColumnExpr>(c.type, index, c.name);
      }
    }
  } else if (!context.columns.empty()) {
    const bool qualifier_ok = parts.size() == 1 || parts[parts.size() - 2] == context.table_name;
    for (size_t i = 0; qualifier_ok && i < context.columns.size(); ++i) {
      if (context.columns[i].name == parts.back()) {
        return std::make_unique<ColumnExpr>(context.columns[i].type, static_cast<int>(i), parts.back());
      }
    }
  }
  if (context.outer_column) return context.outer_column(column_ref);
  return nullptr;
}

const json& sublink_select(const json& sublink) {
  const json& sub = sublink["subselect"];
  if (!sub.contains("SelectStmt")) throw Error(SqlState::feature_not_supported, "this kind of subquery is not supported");
  return sub["SelectStmt"];
}

std::optional<json> exists_simplified(const json& select) {
  if (select.value("op", "SETOP_NONE") != "SETOP_NONE" || !select.contains("targetList") ||
      select.contains("valuesLists") || select.contains("havingClause") || select.contains("limitOffset") ||
      select.contains("lockingClause") || select.contains("windowClause") ||
      select.value("limitOption", "") == "LIMIT_OPTION_WITH_TIES") {
    return std::nullopt;
  }
  // Aggregates or window functions in the target list or ORDER BY make
  // the SELECT one row per group or per window: not simplified.
  for (const char* clause : {"targetList", "sortClause"}) {
    if (!select.contains(clause)) continue;
    if (has_aggregate_call(select[clause]) || has_window_call(select[clause])) return std::nullopt;
  }
  if (select.contains("groupClause") && json_any(select["groupClause"], [](const json& n) {
        return n.is_object() && (n.contains("GroupingSet") || n.contains("SubLink"));
      })) {
    return std::nullopt;
  }
  if (has_set_returning_target(select)) return std::nullopt;
  json simplified = select;
  if (select.contains("limitCount")) {
    const json& limit = select["limitCount"];
    if (!limit.contains("A_Const")) return std::nullopt;
    const json& value = limit["A_Const"];
    if (!value.value("isnull", false)) {
      if (!value.contains("ival") || value["ival"].value("ival", 0) <= 0) return std::nullopt;
    }
    simplified.erase("limitCount");
    simplified.erase("limitOption");
  }
  for (const char* clause : {"groupClause", "distinctClause", "sortClause"}) simplified.erase(clause);
  simplified["targetList"] = json::array({{{"ResTarget", {{"val", {{"A_Const", {{"ival", {{"ival", 1}}}}}}}}}}});
  return simplified;
}

ExprPtr bind_sublink(const json& sublink, BindContext& context, const PlanContext& plan_context,
                     std::vector<const SubqueryExpr*>& registry) {
  const std::string link_type = sublink.value("subLinkType", "");
  SubqueryKind kind;
  if (link_type == "EXISTS_SUBLINK") kind = SubqueryKind::exists;
  else if (link_type == "EXPR_SUBLINK") kind = SubqueryKind::scalar;
  else if (link_type == "ANY_SUBLINK") kind = SubqueryKind::any;
  else if (link_type == "ALL_SUBLINK") kind = SubqueryKind::all;
  else if (link_type == "ARRAY_SUBLINK") kind = SubqueryKind::array;
  // (a, b) op (SELECT x, y ...): the row compared with the subquery's one
  // row (none: NULL), as a scalar subquery is its one value.
  else if (link_type == "ROWCOMPARE_SUBLINK") kind = SubqueryKind::scalar;
  else throw Error(SqlState::feature_not_supported, "subqueries of kind " + link_type + " are not supported");

  // (a, b) op ANY / ALL (SELECT x, y ...) and (a, b) op (SELECT x, y) compare rows.
  const bool row = sublink.contains("testexpr") && sublink["testexpr"].contains("RowExpr");
  if (row && kind != SubqueryKind::any && kind != SubqueryKind::all && link_type != "ROWCOMPARE_SUBLINK") {
    throw Error(SqlState::feature_not_supported, "row comparisons with subqueries are not supported");
  }
  auto count = std::make_shared<size_t>(0);
  std::vector<ExprPtr> correlated;
  // Where in the query text each outer reference is (for decorrelation);
  // `unplaced`: one had no location, so the parse tree cannot tell them apart.
  std::map<int, size_t> outer_refs;
  bool unplaced = false;
  PlanContext inner = plan_context;
  inner.outer_column = [&](const json& node) -> ExprPtr {
    ExprPtr outer = try_bind_column(node, context);
    if (!outer) return nullptr;
    const SqlType type = outer->type;
    correlated.push_back(std::move(outer));
    const int location = node["ColumnRef"].value("location", -1);
    if (location < 0) unplaced = true;
    outer_refs.emplace(location, correlated.size() - 1);
    return std::make_unique<OuterRefExpr>(type, correlated.size() - 1, count);
  };
  const std::optional<json> simplified =
      kind == SubqueryKind::exists ? exists_simplified(sublink_select(sublink)) : std::nullopt;
  const json& select = simplified ? *simplified : sublink_select(sublink);
  auto plan = plan_select(select, inner);
  *count = correlated.size();

  SqlType type{TypeId::boolean};
  if (row) {
    const size_t elements = sublink["testexpr"]["RowExpr"].value("args", json::array()).size();
    if (plan->visible > elements) throw Error(SqlState::syntax_error, "subquery has too many columns");
    if (plan->visible < elements) throw Error(SqlState::syntax_error, "subquery has too few columns");
  } else if (kind != SubqueryKind::exists) {
    if (plan->visible != 1) throw Error(SqlState::syntax_error, "subquery must return only one column");
    if (kind == SubqueryKind::scalar) type = plan->outputs[0]->type;
    // ARRAY(SELECT ...): held as a text[] of the values' text forms (array_text.hpp).
    if (kind == SubqueryKind::array) type = {TypeId::text_array};
  }
  auto expr = std::make_unique<SubqueryExpr>(type, kind, std::move(plan));
  expr->correlated = std::move(correlated);
  if (kind == SubqueryKind::scalar && !row && !expr->correlated.empty() && !unplaced) {
    expr->grouped = plan_grouped_subquery(select, outer_refs, expr->correlated, plan_context);
    if (expr->grouped && expr->grouped->plan->outputs[expr->grouped->key_slots.size()]->type != type) {
      expr->grouped = nullptr;
    }
  }
  if (kind == SubqueryKind::any || kind == SubqueryKind::all || row) {
    const json& test = sublink["testexpr"];
    std::string op = "=";
    if (sublink.contains("operName")) op = sublink["operName"].back()["String"].value("sval", "=");
    if (row) {
      // Hashed where every pair has one type: the rows' values are then
      // compared as they are.
      std::vector<SqlType> left_types, right_types;
      expr->row_hashable = kind == SubqueryKind::any && op == "=";
      for (const auto& element : test["RowExpr"]["args"]) {
        expr->row_left.push_back(bind_expression(element, context));
        left_types.push_back(expr->row_left.back()->type);
        right_types.push_back(expr->plan->outputs[right_types.size()]->type);
        expr->row_hashable = expr->row_hashable && left_types.back() == right_types.back();
      }
      expr->compare = bind_row_comparison(op, left_types, right_types, context);
      registry.push_back(expr.get());
      return expr;
    }
    expr->left = bind_expression(test, context);
    expr->compare = bind_comparison(op, expr->left->type, expr->plan->outputs[0]->type, context);
    const auto* f = dynamic_cast<const FunctionExpr*>(expr->compare.get());
    // The hash probe answers "some row is equal", which decides = ANY; = ALL
    // needs every row equal, so it compares row by row.
    expr->hashable = kind == SubqueryKind::any && op == "=" && f != nullptr && f->args.size() == 2;
  }
  registry.push_back(expr.get());
  return expr;
}

}  // namespace tally::executor
