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

}  // namespace tally::executor
