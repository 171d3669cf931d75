#pragma once
// Which columns a level of a join tree still has to pass up (FromPlanner): a
// column whose every reference is in conditions applied at or below that
// level (a join key, a scan's filter) is dropped there, so the levels above
// neither gather nor copy it. References are the ones the query's scopes
// counted as they resolved names (RelationScope::uses): a condition applied
// counts once for each column it reads, however often it reads it (a
// binder's copy of an operand counts no second reference); one with a
// subquery counts none (the subquery reads outer columns the scopes
// counted, not collect_refs), so its columns stay.
#include <functional>
#include <map>
#include <set>

#include "executor/expression.hpp"

namespace tally::executor {

class ConsumedReferences {
 public:
  // `total(c)`: the references the scopes counted to column c; `used`: the
  // columns some plan part reads; `pinned`: columns read without a counted
  // reference (a USING join's equality), never dropped.
  ConsumedReferences(std::function<int(int)> total, const std::set<int>& used, const std::set<int>& pinned)
      : total_(std::move(total)), used_(used), pinned_(pinned) {}
  // A condition applied (a filter placed on its item, a join's keys or residual).
  void consume(Expr& condition);
  // A condition the planner adds (an implied equality, join_conjunct.hpp):
  // its columns count a reference more each, which it consumes when applied.
  void add(Expr& condition);
  // The references to column c: the scopes' and the added conditions'.
  int total(int c) const;
  // The columns of `columns` that something not applied yet still reads.
  std::set<int> needed(const std::set<int>& columns) const;

 private:
  std::function<int(int)> total_;
  const std::set<int>& used_;
  const std::set<int>& pinned_;
  std::map<int, int> consumed_;
  std::map<int, int> added_;
};

}  // namespace tally::executor
