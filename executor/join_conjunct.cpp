#include "executor/join_conjunct.hpp"

#include <algorithm>
#include <utility>

#include "executor/expression_copy.hpp"
#include "executor/plan_expressions.hpp"

namespace tally::executor {

bool subset(const std::set<int>& a, const std::set<int>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

Conjunct make_conjunct(ExprPtr e) {
  Conjunct c;
  collect_refs(*e, c.refs);
  if (auto* f = dynamic_cast<FunctionExpr*>(e.get()); f != nullptr && f->name == "=" && f->args.size() == 2) {
    for (size_t i = 0; i < 2; ++i) {
      c.sides[i] = f->args[i].get();
      collect_refs(*f->args[i], c.side_refs[i]);
    }
  }
  c.expr = std::move(e);
  return c;
}

namespace {

// The column sets of an equality's two sides: as make_conjunct found them,
// or collected into `found` where the sides are no longer those.
std::pair<const std::set<int>*, const std::set<int>*> side_refs(const Conjunct& c, const FunctionExpr& f,
                                                                std::set<int> (&found)[2]) {
  if (c.sides[0] == f.args[0].get() && c.sides[1] == f.args[1].get()) return {&c.side_refs[0], &c.side_refs[1]};
  collect_refs(*f.args[0], found[0]);
  collect_refs(*f.args[1], found[1]);
  return {&found[0], &found[1]};
}

}  // namespace

bool take_equality(Conjunct& c, const std::set<int>& one, const std::set<int>& other, ExprPtr& one_key,
                   ExprPtr& other_key) {
  auto* f = dynamic_cast<FunctionExpr*>(c.expr.get());
  if (f == nullptr || f->name != "=" || f->args.size() != 2 || f->args[0]->type != f->args[1]->type) return false;
  std::set<int> found[2];
  const auto [p0, p1] = side_refs(c, *f, found);
  const std::set<int>& r0 = *p0;
  const std::set<int>& r1 = *p1;
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
  std::set<int> found[2];
  const auto [p0, p1] = side_refs(c, *f, found);
  const std::set<int>& r0 = *p0;
  const std::set<int>& r1 = *p1;
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

namespace {

// The two columns of an unplaced equality `a = b` of columns of one type.
bool column_equality(const Conjunct& c, const ColumnExpr*& a, const ColumnExpr*& b) {
  const auto* f = dynamic_cast<const FunctionExpr*>(c.expr.get());
  if (c.placed || f == nullptr || f->name != "=" || f->args.size() != 2) return false;
  a = dynamic_cast<const ColumnExpr*>(f->args[0].get());
  b = dynamic_cast<const ColumnExpr*>(f->args[1].get());
  return a != nullptr && b != nullptr && a->index != b->index && a->type == b->type;
}

int find_root(std::map<int, int>& parent, int x) {
  auto at = parent.try_emplace(x, x).first;
  if (at->second == x) return x;
  const int root = find_root(parent, at->second);
  parent[x] = root;
  return root;
}

}  // namespace

EqualColumns equal_columns(const std::vector<Conjunct>& pool) {
  std::map<int, int> parent;
  for (const Conjunct& c : pool) {
    const ColumnExpr* a = nullptr;
    const ColumnExpr* b = nullptr;
    if (!column_equality(c, a, b)) continue;
    const int ra = find_root(parent, a->index);
    const int rb = find_root(parent, b->index);
    if (ra != rb) parent[ra] = rb;
  }
  EqualColumns classes;
  for (const auto& [column, up] : parent) classes[column] = find_root(parent, up);
  return classes;
}

int equality_class(const Conjunct& c, const EqualColumns& classes) {
  const ColumnExpr* a = nullptr;
  const ColumnExpr* b = nullptr;
  if (!column_equality(c, a, b)) return -1;
  const auto ca = classes.find(a->index);
  const auto cb = classes.find(b->index);
  if (ca == classes.end() || cb == classes.end() || ca->second != cb->second) return -1;
  return ca->second;
}

size_t add_implied_equalities(std::vector<Conjunct>& pool, const std::vector<std::set<int>>& items,
                              const EqualColumns& classes) {
  auto item_of = [&](int column) {
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].count(column)) return static_cast<int>(i);
    }
    return -1;
  };
  // Each class's columns, an equality of the class (the copies' pattern),
  // and the pairs an equality joins already.
  std::map<int, std::vector<const ColumnExpr*>> members;
  std::map<int, const Conjunct*> pattern;
  std::set<std::pair<int, int>> joined;
  for (const Conjunct& c : pool) {
    const ColumnExpr* a = nullptr;
    const ColumnExpr* b = nullptr;
    if (!column_equality(c, a, b)) continue;
    const int cls = classes.at(a->index);
    pattern.emplace(cls, &c);
    for (const ColumnExpr* column : {a, b}) {
      auto& list = members[cls];
      if (std::none_of(list.begin(), list.end(), [&](const ColumnExpr* m) { return m->index == column->index; })) {
        list.push_back(column);
      }
    }
    joined.insert({std::min(a->index, b->index), std::max(a->index, b->index)});
  }
  std::vector<Conjunct> added;
  for (const auto& [cls, list] : members) {
    for (size_t i = 0; i < list.size(); ++i) {
      for (size_t j = i + 1; j < list.size(); ++j) {
        const ColumnExpr& a = *list[i];
        const ColumnExpr& b = *list[j];
        const int ia = item_of(a.index);
        const int ib = item_of(b.index);
        if (ia < 0 || ib < 0 || ia == ib) continue;
        if (joined.count({std::min(a.index, b.index), std::max(a.index, b.index)})) continue;
        ExprPtr e = copy_expr(*pattern.at(cls)->expr);
        if (e == nullptr) continue;
        auto& f = static_cast<FunctionExpr&>(*e);
        f.args[0] = std::make_unique<ColumnExpr>(a.type, a.index, a.name);
        f.args[1] = std::make_unique<ColumnExpr>(b.type, b.index, b.name);
        added.push_back(make_conjunct(std::move(e)));
      }
    }
  }
  for (auto& c : added) pool.push_back(std::move(c));
  return added.size();
}

}  // namespace tally::executor
