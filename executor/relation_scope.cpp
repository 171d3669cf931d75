#include "executor/relation_scope.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace tally::executor {

void RelationScope::add_relation(const std::string& name, const std::vector<ScopedColumn>& columns) {
  if (!name.empty() && has_relation(name)) {
    throw Error(SqlState::duplicate_alias, "table name \"" + name + "\" specified more than once");
  }
  relations_.push_back(name);
  for (const auto& c : columns) {
    if (c.in_star) star_order_.push_back(static_cast<int>(columns_.size()));
    columns_.push_back(c);
    columns_.back().relation = name;
  }
}

void RelationScope::add_merged(const std::string& name, SqlType type, int index, const std::vector<int>& hidden) {
  for (auto& c : columns_) {
    if (std::find(hidden.begin(), hidden.end(), c.index) != hidden.end()) c.unqualified = false;
  }
  // Merged columns come first in `*`, and the hidden ones leave it.
  std::vector<int> order;
  size_t merged = 0;
  for (int i : star_order_) merged += columns_[static_cast<size_t>(i)].relation.empty() ? 1 : 0;
  order.assign(star_order_.begin(), star_order_.begin() + static_cast<long>(merged));
  order.push_back(static_cast<int>(columns_.size()));
  for (size_t k = merged; k < star_order_.size(); ++k) {
    const auto& c = columns_[static_cast<size_t>(star_order_[k])];
    if (std::find(hidden.begin(), hidden.end(), c.index) == hidden.end()) order.push_back(star_order_[k]);
  }
  star_order_ = std::move(order);
  columns_.push_back({"", name, type, index, true});
}

bool RelationScope::has_relation(const std::string& name) const {
  return std::find(relations_.begin(), relations_.end(), name) != relations_.end();
}

int RelationScope::resolve(const std::vector<std::string>& parts, bool outer_may_have) const {
  const std::string& column = parts.back();
  if (parts.size() >= 2) {
    const std::string& relation = parts[parts.size() - 2];
    const bool schema_ok = parts.size() < 3 || parts[0] == "public";
    if (!has_relation(relation) || !schema_ok) {
      if (outer_may_have) return -1;
      throw Error(SqlState::undefined_table, "missing FROM-clause entry for table \"" + relation + "\"");
    }
    for (const auto& c : columns_) {
      if (c.relation == relation && c.name == column) {
        mark_used(c.index);
        return c.index;
      }
    }
    if (outer_may_have) return -1;
    throw Error(SqlState::undefined_column, "column " + relation + "." + column + " does not exist");
  }
  int found = -1;
  for (const auto& c : columns_) {
    if (!c.unqualified || c.name != column) continue;
    if (found >= 0 && found != c.index) {
      throw Error(SqlState::ambiguous_column, "column reference \"" + column + "\" is ambiguous");
    }
    found = c.index;
  }
  if (found >= 0) mark_used(found);
  return found;
}

std::vector<ScopedColumn> RelationScope::star(const std::string& relation) const {
  std::vector<ScopedColumn> out;
  if (relation.empty()) {
    for (int i : star_order_) out.push_back(columns_[static_cast<size_t>(i)]);
    return out;
  }
  if (!has_relation(relation)) {
    throw Error(SqlState::undefined_table, "missing FROM-clause entry for table \"" + relation + "\"");
  }
  for (const auto& c : columns_) {
    if (c.relation == relation && c.in_star) out.push_back(c);
  }
  return out;
}

std::string RelationScope::display_name(int index) const {
  for (const auto& c : columns_) {
    if (c.index == index && !c.relation.empty()) return c.relation + "." + c.name;
  }
  for (const auto& c : columns_) {
    if (c.index == index) return c.name;
  }
  return "?";
}

}  // namespace tally::executor
