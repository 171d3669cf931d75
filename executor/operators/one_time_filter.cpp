#include "executor/operators/one_time_filter.hpp"

#include <algorithm>
#include <set>

#include "executor/plan_expressions.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

bool is_one_time_condition(Expr& condition) {
  std::set<int> refs;
  collect_refs(condition, refs);
  return refs.empty() && !has_volatile_function(condition);
}

bool holds_once(const Expr& condition, const std::vector<Value>* parameters) {
  const Value passed = evaluate_constant(condition, parameters);
  return std::holds_alternative<bool>(passed) && std::get<bool>(passed);
}

bool one_time_conditions_hold(const Expr& where, const std::vector<Value>* parameters) {
  if (const auto* all = dynamic_cast<const BoolExpr*>(&where); all && all->op == BoolOp::and_) {
    return std::all_of(all->args.begin(), all->args.end(),
                       [parameters](const ExprPtr& a) { return one_time_conditions_hold(*a, parameters); });
  }
  // is_one_time_condition walks the tree without changing it.
  return !is_one_time_condition(const_cast<Expr&>(where)) || holds_once(where, parameters);
}

OneTimeFilter::OneTimeFilter(std::unique_ptr<PhysicalOperator> child, std::vector<ExprPtr> conditions,
                             size_t space_width)
    : PhysicalOperator(child->columns(), child->estimated_rows()),
      conditions_(std::move(conditions)),
      space_width_(space_width) {
  layout_ = child->layout();
  children_.push_back(std::move(child));
}

void OneTimeFilter::run(ExecContext& context, ChunkSink& sink) const {
  for (const auto& condition : conditions_) {
    if (!holds_once(*condition, context.parameters)) return;
  }
  run_operator(*children_[0], context, sink);
}

}  // namespace tally::executor
