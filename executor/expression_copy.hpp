#pragma once
// Copies of bound expressions, for a plan made from another (the lookup
// form of a join, lookup_rewrite.hpp), whose expressions it cannot share:
// a plan owns its expressions.
#include <functional>

#include "executor/expression.hpp"

namespace tally::executor {

// A copy of `e` in which `replace` (may be empty) is asked first for each
// node: what it returns (not null) stands for that node and its children.
// Null where `e` holds a node without a copy (a subquery, a window's result),
// or where `replace` answers for a node by failing (`failed` set).
struct ExprCopy {
  std::function<ExprPtr(const Expr&)> replace;
  bool failed = false;
  ExprPtr operator()(const Expr& e);
};

inline ExprPtr copy_expr(const Expr& e) { return ExprCopy{}(e); }

// An expression another plan owns, referred to rather than copied: the
// lookup form's HAVING reads the uncorrelated subquery of its hash-join
// form (TPC-H Q11's), whose result both plans then share. The owner must
// outlive it; expression walks (for_each_child) do not see into it.
class SharedExpr final : public Expr {
 public:
  explicit SharedExpr(const Expr& target) : Expr(target.type), target(target) {}
  Vector evaluate(const EvalInput& input) const override { return target.evaluate(input); }
  const Expr& target;
};

}  // namespace tally::executor
