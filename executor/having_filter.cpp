// HAVING conjuncts as filters on partial states: see having_filter.hpp.
#include "executor/having_filter.hpp"

#include <algorithm>

#include "executor/expression_copy.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/subquery_expr.hpp"

namespace tally::executor {

namespace {

// `constant op x` as `x op' constant`.
std::string mirrored(const std::string& op) {
  if (op == "<") return ">";
  if (op == "<=") return ">=";
  if (op == ">") return "<";
  if (op == ">=") return "<=";
  return op;  // = and <> are symmetric
}

bool comparison_operator(const std::string& op) {
  return op == "<" || op == "<=" || op == ">" || op == ">=" || op == "=" || op == "<>";
}

// Whether `e` has one value per statement: constants, parameters, scalar
// subqueries that read nothing of the enclosing query (TPC-H Q11's
// threshold) and non-volatile functions of them.
bool once_per_statement(const Expr& e) {
  if (dynamic_cast<const ConstExpr*>(&e) || dynamic_cast<const ParamExpr*>(&e)) return true;
  if (const auto* shared = dynamic_cast<const SharedExpr*>(&e)) return once_per_statement(shared->target);
  if (const auto* s = dynamic_cast<const SubqueryExpr*>(&e))
    return s->kind == SubqueryKind::scalar && s->correlated.empty() && !s->grouped;
  if (const auto* f = dynamic_cast<const FunctionExpr*>(&e)) {
    if (f->args.empty() || volatile_function(f->name)) return false;
    return std::all_of(f->args.begin(), f->args.end(), [](const ExprPtr& a) { return once_per_statement(*a); });
  }
  return false;
}

// The exact value of a once-per-statement expression: an integer or a
// finite numeric. A subquery in it runs now (its result is kept for the
// statement, so HAVING's own evaluation does not run it again); where it
// raises an error there is no value, and HAVING's evaluation raises it,
// as PostgreSQL does, only if some group evaluates it.
std::optional<Numeric> exact_value(const Expr& e, const std::vector<Value>* parameters) {
  if (foldable(e)) return exact_constant(e, parameters);
  if (!once_per_statement(e) || e.type.id == TypeId::boolean) return std::nullopt;
  Value v;
  try {
    v = evaluate_constant(e, parameters);
  } catch (const Error& error) {
    if (error.state() == SqlState::query_canceled || error.state() == SqlState::out_of_memory) throw;
    return std::nullopt;
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return Numeric{*i, 0};
  if (const auto* n = std::get_if<Numeric>(&v); n && !n->is_infinite() && n->scale >= 0) return *n;
  return std::nullopt;
}

void collect(const Expr& e, size_t keys, size_t aggregates, const std::vector<Value>* parameters,
             std::vector<GroupFilter>& out) {
  if (const auto* b = dynamic_cast<const BoolExpr*>(&e)) {
    if (b->op != BoolOp::and_) return;
    for (const auto& arg : b->args) collect(*arg, keys, aggregates, parameters, out);
    return;
  }
  const auto* f = dynamic_cast<const FunctionExpr*>(&e);
  if (f == nullptr || f->args.size() != 2 || !comparison_operator(f->name)) return;
  for (int side = 0; side < 2; ++side) {
    const auto* column = dynamic_cast<const ColumnExpr*>(f->args[static_cast<size_t>(side)].get());
    if (column == nullptr || column->index < 0) continue;
    const auto index = static_cast<size_t>(column->index);
    if (index < keys || index >= keys + aggregates) continue;
    const auto constant = exact_value(*f->args[static_cast<size_t>(1 - side)], parameters);
    if (!constant || constant->scale > 38) continue;
    out.push_back(GroupFilter{index - keys, side == 0 ? f->name : mirrored(f->name), *constant});
    return;
  }
}

}  // namespace

std::vector<GroupFilter> having_group_filter(const Expr& having, size_t keys, size_t aggregates,
                                             const std::vector<Value>* parameters) {
  std::vector<GroupFilter> out;
  collect(having, keys, aggregates, parameters, out);
  return out;
}

ScaledGroupTest scaled_group_test(const GroupFilter& filter, int32_t scale) {
  return ScaledGroupTest(filter.op, filter.constant.mantissa, filter.constant.scale, scale);
}

}  // namespace tally::executor
