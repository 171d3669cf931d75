#pragma once
// The conjuncts of a FROM clause's conditions as the join planner
// (from_planner.cpp) places them: each with the column space indexes it
// reads, and the equalities that become hash join keys.
#include <set>

#include "executor/expression.hpp"

namespace tally::executor {

struct Conjunct {
  ExprPtr expr;
  std::set<int> refs;
  bool placed = false;
};

// Whether every index of `a` is in `b`.
bool subset(const std::set<int>& a, const std::set<int>& b);

Conjunct make_conjunct(ExprPtr e);

// The equality `a = b` of a conjunct with one side over `one` and the other
// over `other`: moves the sides out (one's first) and returns true.
bool take_equality(Conjunct& c, const std::set<int>& one, const std::set<int>& other, ExprPtr& one_key,
                   ExprPtr& other_key);

// The sides of an equality conjunct `a = b` with one side over `one` and the
// other over `other` (one's first), without taking them; false when it is not one.
bool equality_sides(const Conjunct& c, const std::set<int>& one, const std::set<int>& other, const Expr*& one_key,
                    const Expr*& other_key);

}  // namespace tally::executor
