#include "executor/consumed_references.hpp"

#include "executor/plan_expressions.hpp"

namespace tally::executor {

void ConsumedReferences::consume(Expr& condition) {
  if (has_subquery(condition)) return;
  std::set<int> refs;
  collect_refs(condition, refs);
  for (const int c : refs) ++consumed_[c];
}

void ConsumedReferences::add(Expr& condition) {
  std::set<int> refs;
  collect_refs(condition, refs);
  for (const int c : refs) ++added_[c];
}

int ConsumedReferences::total(int c) const {
  const auto added = added_.find(c);
  return total_(c) + (added == added_.end() ? 0 : added->second);
}

std::set<int> ConsumedReferences::needed(const std::set<int>& columns) const {
  std::set<int> out;
  for (const int c : columns) {
    const auto at = consumed_.find(c);
    const int consumed = at == consumed_.end() ? 0 : at->second;
    const int total = this->total(c);
    // A column read somewhere without a counted reference stays too.
    const bool done = !pinned_.count(c) && consumed >= total && (total > 0 || !used_.count(c));
    if (!done) out.insert(c);
  }
  return out;
}

}  // namespace tally::executor
