#pragma once
// The conjuncts of a FROM clause's conditions as the join planner
// (from_planner.cpp) places them: each with the column space indexes it
// reads, and the equalities that become hash join keys.
#include <map>
#include <set>
#include <vector>

#include "executor/expression.hpp"

namespace tally::executor {

struct Conjunct {
  ExprPtr expr;
  std::set<int> refs;
  bool placed = false;
  // An equality's two sides as make_conjunct found them, with the indexes
  // each reads: the join order's search asks for them of every pair of
  // parts (an eight-table TPC-H query's planning was mostly collecting
  // these sets again).
  const Expr* sides[2] = {nullptr, nullptr};
  std::set<int> side_refs[2];
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

// Columns the pool's unplaced equalities `a = b` of two columns of one type
// make equal, each with its class's number.
using EqualColumns = std::map<int, int>;
EqualColumns equal_columns(const std::vector<Conjunct>& pool);

// The class both columns of `c` belong to, where `c` is an equality of two
// columns of one class; -1 otherwise.
int equality_class(const Conjunct& c, const EqualColumns& classes);

// Adds to `pool` the equalities its equalities of columns imply between
// columns of different `items` (each item's column space indexes), where no
// equality joins them directly: from l.partkey = p.partkey and l.partkey =
// ps.partkey, p.partkey = ps.partkey, so that the join order may join part
// and partsupp before lineitem (TPC-H Q9) instead of holding the join of
// lineitem for partsupp. A join then takes one key of each class
// (equality_class): the others hold already. Returns how many it added (at
// the pool's end).
// `classes` is equal_columns(pool), which the added equalities leave as it is.
size_t add_implied_equalities(std::vector<Conjunct>& pool, const std::vector<std::set<int>>& items,
                              const EqualColumns& classes);

}  // namespace tally::executor
