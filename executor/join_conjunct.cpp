#include "executor/join_conjunct.hpp"

#include <algorithm>

#include "executor/plan_expressions.hpp"

namespace tally::executor {

bool subset(const std::set<int>& a, const std::set<int>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

Conjunct make_conjunct(ExprPtr e) {
  Conjunct c;
  collect_refs(*e, c.refs);
  c.expr = std::move(e);
  return c;
}

bool take_equality(Conjunct& c, const std::set<int>& one, const std::set<int>& other, ExprPtr& one_key,
                   ExprPtr& other_key) {
  auto* f = dynamic_cast<FunctionExpr*>(c.expr.get());
  if (f == nullptr || f->name != "=" || f->args.size() != 2 || f->args[0]->type != f->args[1]->type) return false;
  std::set<int> r0, r1;
  collect_refs(*f->args[0], r0);
  collect_refs(*f->args[1], r1);
  if (r0.empty() || r1.empty()) return false;
  if (subset(r0, one) && subset(r1, other)) {
    one_key = std::move(f->args[0]);
    other_key = std::move(f->args[1]);
  } else if (subset(r1, one) && subset(r0, other)) {
    one_key = std::move(f->args[1]);
    other_key = std::move(f->args[0]);
  } else {
    return false;
  }
  c.placed = true;
  return true;
}

bool equality_sides(const Conjunct& c, const std::set<int>& one, const std::set<int>& other, const Expr*& one_key,
                    const Expr*& other_key) {
  auto* f = dynamic_cast<const FunctionExpr*>(c.expr.get());
  if (c.placed || f == nullptr || f->name != "=" || f->args.size() != 2) return false;
  std::set<int> r0, r1;
  collect_refs(*f->args[0], r0);
  collect_refs(*f->args[1], r1);
  if (r0.empty() || r1.empty()) return false;
  if (subset(r0, one) && subset(r1, other)) {
    one_key = f->args[0].get();
    other_key = f->args[1].get();
    return true;
  }
  if (subset(r1, one) && subset(r0, other)) {
    one_key = f->args[1].get();
    other_key = f->args[0].get();
    return true;
  }
  return false;
}

}  // namespace tally::executor
