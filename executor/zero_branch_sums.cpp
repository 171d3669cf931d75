#include "executor/zero_branch_sums.hpp"

#include "executor/aggregate_function.hpp"
#include "executor/engine_aggregator.hpp"
#include "executor/expression_copy.hpp"
#include "executor/parser.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan_detail.hpp"

namespace tally::executor {

namespace {

// A CASE value that is the constant zero of scale 0 (a zero written 0.0
// would show its own scale where no x is added: not this form).
bool zero_constant(const Expr& e) {
  if (!foldable(e)) return false;
  try {
    const Value v = evaluate_constant(e, nullptr);
    if (const auto* n = std::get_if<Numeric>(&v)) return n->scale == 0 && n->is_zero();
    if (const auto* i = std::get_if<int64_t>(&v)) return *i == 0;
  } catch (const Error&) {
  }
  return false;
}

// The scale s of a CASE whose values are zeros (or NULL) and expressions of
// static scale s > 0, with at least one of each; nullopt otherwise.
std::optional<int32_t> zero_branch_scale(const CaseExpr& c) {
  std::optional<int32_t> scale;
  bool zero = false;
  auto value = [&](const Expr* v) {
    if (v == nullptr) return true;  // ELSE NULL
    if (const auto* k = dynamic_cast<const ConstExpr*>(v); k != nullptr && is_null(k->value)) return true;
    if (zero_constant(*v)) {
      zero = true;
      return true;
    }
    const std::optional<int32_t> s = engine_aggregation::static_numeric_scale(*v);
    if (!s || *s <= 0 || (scale && *scale != *s)) return false;
    scale = s;
    return true;
  };
  for (const auto& [when, then] : c.whens) {
    if (!value(then.get())) return std::nullopt;
  }
  if (!value(c.otherwise.get())) return std::nullopt;
  return zero && scale ? scale : std::nullopt;
}

// The CASE with each zero value replaced by `by` (a fresh copy each time).
ExprPtr with_zeros_as(const CaseExpr& c, const std::function<ExprPtr()>& by) {
  ExprCopy copy;
  copy.replace = [&](const Expr& node) -> ExprPtr {
    if (&node == &c) return nullptr;
    for (const auto& [when, then] : c.whens) {
      if (&node == then.get() && zero_constant(node)) return by();
    }
    if (&node == c.otherwise.get() && zero_constant(node)) return by();
    return nullptr;
  };
  return copy(c);
}

// Calls fn on each slot of `slot`'s tree that holds a reference to post-
// aggregate column `column` (a ColumnExpr), where the slot can be reached.
void each_reference(ExprPtr& slot, int column, const std::function<void(ExprPtr&)>& fn) {
  Expr* e = slot.get();
  if (e == nullptr) return;
  if (const auto* c = dynamic_cast<const ColumnExpr*>(e)) {
    if (c->index == column) fn(slot);
    return;
  }
  auto all = [&](std::vector<ExprPtr>& v) {
    for (auto& a : v) each_reference(a, column, fn);
  };
  if (auto* f = dynamic_cast<FunctionExpr*>(e)) all(f->args);
  else if (auto* b = dynamic_cast<BoolExpr*>(e)) all(b->args);
  else if (auto* n = dynamic_cast<NullTestExpr*>(e)) each_reference(n->arg, column, fn);
  else if (auto* k = dynamic_cast<CaseExpr*>(e)) {
    for (auto& [when, then] : k->whens) {
      each_reference(when, column, fn);
      each_reference(then, column, fn);
    }
    each_reference(k->otherwise, column, fn);
  } else if (auto* k = dynamic_cast<CoalesceExpr*>(e)) all(k->args);
  else if (auto* i = dynamic_cast<InListExpr*>(e)) {
    each_reference(i->arg, column, fn);
    all(i->list);
  }
}

}  // namespace

void scale_zero_branch_sums(SelectPlan& plan, const BindContext& base) {
  if (!plan.aggregate || !plan.grouping_sets.empty() || !plan.grouping_calls.empty() || plan.windows) return;
  const size_t keys = plan.group_keys.size();
  const size_t calls = plan.aggregates.size();
  for (size_t a = 0; a < calls; ++a) {
    AggregateCall& call = plan.aggregates[a];
    if (call.signature.kind != AggKind::sum || call.distinct || call.args.size() != 1 ||
        call.args[0]->type.id != TypeId::numeric) {
      continue;
    }
    const auto* c = dynamic_cast<const CaseExpr*>(call.args[0].get());
    if (c == nullptr) continue;
    const std::optional<int32_t> scale = zero_branch_scale(*c);
    if (!scale) continue;
    // Every reference to the sum must be one this rewrite reaches.
    const int column = static_cast<int>(keys + a);
    int reachable = 0, all = 0;
    auto count = [&](ExprPtr& slot) {
      if (!slot) return;
      each_reference(slot, column, [&](ExprPtr&) { ++reachable; });
      all += count_refs(*slot, column);
    };
    for (auto& o : plan.outputs) count(o);
    count(plan.having);
    if (reachable != all) continue;
    const SqlType type = call.args[0]->type;
    ExprPtr summed = with_zeros_as(*c, [&] { return std::make_unique<ConstExpr>(type, Numeric{0, *scale}); });
    ExprPtr counted = with_zeros_as(*c, [&] { return std::make_unique<ConstExpr>(type, Value{}); });
    if (!summed || !counted) continue;
    // CASE WHEN n > 0 THEN s ELSE round(s) END over [s, n].
    BindContext pair;
    pair.parameter_types = base.parameter_types;
    pair.settings = base.settings;
    pair.columns = {{"s", call.signature.result_type}, {"n", SqlType{TypeId::int8}}};
    const auto parsed = parse_sql("SELECT CASE WHEN n > 0 THEN s ELSE round(s) END");
    ExprPtr shown = bind_expression(parsed.at(0).body()["targetList"][0]["ResTarget"]["val"], pair);
    AggregateCall hidden;
    hidden.name = "count";
    hidden.signature = resolve_aggregate("count", {type}, false, false);
    hidden.args.push_back(std::move(counted));
    call.args[0] = std::move(summed);
    const SqlType result_type = call.signature.result_type;  // `call` moves with the push below
    const int count_column = static_cast<int>(keys + plan.aggregates.size());
    plan.aggregates.push_back(std::move(hidden));
    auto rewrite = [&](ExprPtr& slot) {
      if (!slot) return;
      each_reference(slot, column, [&](ExprPtr& ref) {
        ExprCopy copy;
        copy.replace = [&](const Expr& node) -> ExprPtr {
          const auto* r = dynamic_cast<const ColumnExpr*>(&node);
          if (r == nullptr) return nullptr;
          return std::make_unique<ColumnExpr>(r->index == 0 ? result_type : SqlType{TypeId::int8},
                                              r->index == 0 ? column : count_column);
        };
        ref = copy(*shown);
      });
    };
    for (auto& o : plan.outputs) rewrite(o);
    rewrite(plan.having);
  }
}

}  // namespace tally::executor
