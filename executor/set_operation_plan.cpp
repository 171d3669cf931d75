#include "executor/set_operation_plan.hpp"

#include <functional>

#include "common/error.hpp"
#include "executor/binder.hpp"
#include "executor/operators/set_operation.hpp"
#include "executor/operators/subquery_scan.hpp"
#include "executor/operators/values_scan.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/select_plan_detail.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

Error positioned(Error e, const json& node) {
  if (node.contains("location")) e.with_position(node["location"].get<int>() + 1);
  return e;
}

// ORDER BY over a set operation or VALUES names result columns only, by
// ordinal or by name (PostgreSQL's rule: an expression is 0A000).
// (A VALUES list's ORDER BY may also sort by an expression over its columns:
// `expressions` binds one, the caller adds it as a hidden output; null: 0A000.)
int sort_column(const json& node, const std::vector<std::string>& names, const std::function<int(const json&)>& expressions) {
  if (const int position = order_by_position(node, names.size()); position >= 0) return position;
  if (node.contains("ColumnRef")) {
    const auto& fields = node["ColumnRef"]["fields"];
    if (fields.size() == 1 && fields[0].contains("String")) {
      const std::string name = fields[0]["String"].value("sval", "");
      int found = -1;
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] != name) continue;
        if (found >= 0) throw positioned(Error(SqlState::ambiguous_column, "ORDER BY \"" + name + "\" is ambiguous"), node["ColumnRef"]);
        found = static_cast<int>(i);
      }
      if (found < 0) throw positioned(Error(SqlState::undefined_column, "column \"" + name + "\" does not exist"), node["ColumnRef"]);
      return found;
    }
  }
  if (expressions) return expressions(node);
  Error e(SqlState::feature_not_supported, "invalid UNION/INTERSECT/EXCEPT ORDER BY clause");
  e.with_detail("Only result column names can be used, not expressions or functions.");
  throw e;
}

// The plan that passes `source`'s rows (its columns 0..n-1) through, with
// the statement's ORDER BY, LIMIT and OFFSET.
std::shared_ptr<const SelectPlan> plan_over(OperatorPtr source, std::vector<std::string> names, const json& select,
                                            PlanContext& pc, bool sort_expressions) {
  auto plan = std::make_shared<SelectPlan>();
  const auto& columns = source->columns();
  BindContext bind;
  base_context(bind, pc);
  bind.table_name = "*VALUES*";
  for (size_t i = 0; i < columns.size(); ++i) {
    plan->outputs.push_back(std::make_unique<ColumnExpr>(columns[i].type, static_cast<int>(i)));
    bind.columns.push_back({names[i], columns[i].type});
  }
  plan->visible = columns.size();
  plan->names = std::move(names);
  std::function<int(const json&)> hidden;
  if (sort_expressions) {
    hidden = [&](const json& node) {
      plan->outputs.push_back(bind_expression(node, bind));
      return static_cast<int>(plan->outputs.size() - 1);
    };
  }
  for (const auto& s : select.value("sortClause", json::array())) {
    const auto& sb = s["SortBy"];
    SortKey key;
    key.column = sort_column(sb["node"], plan->names, hidden);
    key.descending = sb.value("sortby_dir", "") == "SORTBY_DESC";
    const std::string nulls = sb.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
    key.nulls_first = nulls == "SORTBY_NULLS_FIRST" || (nulls == "SORTBY_NULLS_DEFAULT" && key.descending);
    plan->sort.push_back(key);
  }
  bind_limit_offset(select, pc, *plan);
  plan->source_width = columns.size();
  plan->source = std::move(source);
  return plan;
}

// PostgreSQL's select_common_typmod: the common type keeps a typmod only
// when every input has that type with that typmod ('y'::char(2) UNION 'z'
// is bpchar without one); all-unknown inputs resolve to text.
SqlType finish_common_type(SqlType type, const std::vector<SqlType>& inputs) {
  if (type.id == TypeId::unknown) return {TypeId::text};
  for (const auto& t : inputs) {
    if (t.id != type.id || t.typmod != type.typmod) return {type.id};
  }
  return type;
}

const json& select_body(const json& node) { return node.contains("SelectStmt") ? node["SelectStmt"] : node; }

}  // namespace

std::shared_ptr<const SelectPlan> plan_set_operation(const json& select, PlanContext& pc) {
  const std::string op = select.value("op", "SETOP_NONE");
  const SetOperationKind kind = op == "SETOP_UNION"       ? SetOperationKind::union_
                                : op == "SETOP_INTERSECT" ? SetOperationKind::intersect
                                                          : SetOperationKind::except;
  const char* word = kind == SetOperationKind::union_ ? "UNION" : kind == SetOperationKind::intersect ? "INTERSECT" : "EXCEPT";
  std::shared_ptr<const SelectPlan> branches[2];
  const char* sides[2] = {"larg", "rarg"};
  for (size_t s = 0; s < 2; ++s) {
    const json& body = select_body(select[sides[s]]);
    // A plain SELECT branch leaves its untyped literals for the resolution
    // below; a nested set operation or VALUES resolves its own first.
    PlanContext branch = pc;
    branch.keep_unknown_outputs = body.value("op", "SETOP_NONE") == "SETOP_NONE" && !body.contains("valuesLists");
    branches[s] = plan_select(body, branch);
  }
  const size_t n = branches[0]->visible;
  if (branches[1]->visible != n) {
    throw Error(SqlState::syntax_error, std::string("each ") + word + " query must have the same number of columns");
  }
  BindContext bind;
  base_context(bind, pc);
  std::vector<OutputColumn> columns;
  std::vector<std::vector<ExprPtr>> casts(2);
  for (size_t i = 0; i < n; ++i) {
    SqlType type{TypeId::unknown};
    for (const auto& b : branches) type = common_supertype(type, b->outputs[i]->type, word);
    type = finish_common_type(type, {branches[0]->outputs[i]->type, branches[1]->outputs[i]->type});
    columns.push_back({branches[0]->names[i], type});
  }
  OperatorPtr children[2];
  for (size_t s = 0; s < 2; ++s) {
    std::vector<OutputColumn> branch_columns;
    std::vector<int> layout;
    for (size_t i = 0; i < n; ++i) {
      const SqlType from = branches[s]->outputs[i]->type;
      branch_columns.push_back({branches[s]->names[i], from});
      layout.push_back(static_cast<int>(i));
      ExprPtr cast;
      if (from != columns[i].type) {
        cast = coerce_to(std::make_unique<ColumnExpr>(from, static_cast<int>(i)), columns[i].type, CastContext::implicit, bind);
      }
      casts[s].push_back(std::move(cast));
    }
    children[s] = std::make_unique<SubqueryScan>(branches[s], "*SELECT* " + std::to_string(s + 1), std::move(branch_columns),
                                                 std::move(layout));
  }
  std::vector<std::string> names;
  for (const auto& c : columns) names.push_back(c.name);
  auto source = std::make_unique<SetOperation>(kind, select.value("all", false), std::move(children[0]),
                                               std::move(children[1]), std::move(casts), std::move(columns));
  return plan_over(std::move(source), std::move(names), select, pc, false);
}

std::shared_ptr<const SelectPlan> plan_values(const json& select, PlanContext& pc) {
  BindContext bind;
  base_context(bind, pc);
  std::vector<std::vector<ExprPtr>> rows;
  for (const auto& list : select["valuesLists"]) {
    const json& items = list.contains("List") ? list["List"]["items"] : list;
    std::vector<ExprPtr> row;
    for (const auto& item : items) row.push_back(bind_expression(item, bind));
    if (!rows.empty() && row.size() != rows[0].size()) {
      throw positioned(Error(SqlState::syntax_error, "VALUES lists must all be the same length"), items[0].begin().value());
    }
    rows.push_back(std::move(row));
  }
  const size_t n = rows.empty() ? 0 : rows[0].size();
  std::vector<OutputColumn> columns;
  std::vector<std::string> names;
  for (size_t c = 0; c < n; ++c) {
    SqlType type{TypeId::unknown};
    std::vector<SqlType> inputs;
    for (const auto& row : rows) {
      type = common_supertype(type, row[c]->type, "VALUES");
      inputs.push_back(row[c]->type);
    }
    type = finish_common_type(type, inputs);
    for (auto& row : rows) row[c] = coerce_to(std::move(row[c]), type, CastContext::implicit, bind);
    names.push_back("column" + std::to_string(c + 1));
    columns.push_back({names.back(), type});
  }
  return plan_over(std::make_unique<ValuesScan>(std::move(rows), std::move(columns)), std::move(names), select, pc, true);
}

}  // namespace tally::executor
