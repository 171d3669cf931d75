#include "executor/expression_equality.hpp"

#include "executor/plan_expressions.hpp"

namespace tally::executor {
namespace {

// Constants equal as PostgreSQL would print them: 1.0 and 1.00 are equal
// numerics but give products of different scales.
bool same_value(const Value& a, const Value& b) {
  if (a.index() != b.index()) return false;
  if (const auto* n = std::get_if<Numeric>(&a)) {
    const auto& m = std::get<Numeric>(b);
    return n->mantissa == m.mantissa && n->scale == m.scale;
  }
  return a == b;
}

bool same_list(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i] || !b[i] || !same_expression(*a[i], *b[i])) return false;
  }
  return true;
}

bool same_like(const FunctionExpr::LikeConstant* a, const FunctionExpr::LikeConstant* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a->pattern == b->pattern && a->negate == b->negate && a->case_insensitive == b->case_insensitive;
}

template <class T>
const T* as(const Expr& e) {
  return dynamic_cast<const T*>(&e);
}

}  // namespace

bool same_expression(const Expr& a, const Expr& b) {
  if (a.type != b.type) return false;
  if (const auto* x = as<ColumnExpr>(a)) {
    const auto* y = as<ColumnExpr>(b);
    return y && x->index == y->index;
  }
  if (const auto* x = as<ConstExpr>(a)) {
    const auto* y = as<ConstExpr>(b);
    return y && same_value(x->value, y->value);
  }
  if (const auto* x = as<ParamExpr>(a)) {
    const auto* y = as<ParamExpr>(b);
    return y && x->index == y->index;
  }
  if (const auto* x = as<FunctionExpr>(a)) {
    // The binder resolves a function by its name and argument types, which
    // the arguments' comparison covers.
    // A volatile function's two calls are two values (random() per call).
    // A LIKE's constant pattern is held by the call, not an argument.
    const auto* y = as<FunctionExpr>(b);
    return y && !volatile_function(x->name) && x->name == y->name && x->strict == y->strict &&
           same_like(x->like.get(), y->like.get()) && same_list(x->args, y->args);
  }
  if (const auto* x = as<BoolExpr>(a)) {
    const auto* y = as<BoolExpr>(b);
    return y && x->op == y->op && same_list(x->args, y->args);
  }
  if (const auto* x = as<NullTestExpr>(a)) {
    const auto* y = as<NullTestExpr>(b);
    return y && x->is_not == y->is_not && same_expression(*x->arg, *y->arg);
  }
  if (const auto* x = as<CoalesceExpr>(a)) {
    const auto* y = as<CoalesceExpr>(b);
    return y && same_list(x->args, y->args);
  }
  if (const auto* x = as<InListExpr>(a)) {
    const auto* y = as<InListExpr>(b);
    return y && x->negated == y->negated && same_expression(*x->arg, *y->arg) && same_list(x->list, y->list);
  }
  if (const auto* x = as<CaseExpr>(a)) {
    const auto* y = as<CaseExpr>(b);
    if (!y || x->whens.size() != y->whens.size()) return false;
    for (size_t i = 0; i < x->whens.size(); ++i) {
      if (!same_expression(*x->whens[i].first, *y->whens[i].first) ||
          !same_expression(*x->whens[i].second, *y->whens[i].second))
        return false;
    }
    if (!x->otherwise || !y->otherwise) return !x->otherwise && !y->otherwise;
    return same_expression(*x->otherwise, *y->otherwise);
  }
  return false;
}

}  // namespace tally::executor
