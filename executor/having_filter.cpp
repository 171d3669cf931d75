// HAVING conjuncts as filters on partial states: see having_filter.hpp.
#include "executor/having_filter.hpp"

#include "executor/plan_expressions.hpp"

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
    const auto constant = exact_constant(*f->args[static_cast<size_t>(1 - side)], parameters);
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
