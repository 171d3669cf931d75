#include "executor/grouping_sets.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

constexpr size_t kMaxCubeElements = 12;
constexpr size_t kMaxGroupingSets = 4096;

using KeyFn = std::function<int(const json&)>;

void check_count(size_t sets) {
  if (sets > kMaxGroupingSets) throw Error(SqlState::statement_too_complex, "too many grouping sets present (maximum 4096)");
}

// The keys of one element of GROUPING SETS / ROLLUP / CUBE: an expression,
// or a parenthesized list (a row constructor there is a list of keys, as
// PostgreSQL reads it).
std::vector<int> element_keys(const json& element, const KeyFn& key) {
  const json* list = nullptr;
  if (element.contains("GroupingSet") && element["GroupingSet"].value("kind", "") == "GROUPING_SET_SIMPLE") {
    list = &element["GroupingSet"]["content"];
  } else if (element.contains("RowExpr")) {
    list = &element["RowExpr"]["args"];
  }
  if (list == nullptr) return {key(element)};
  std::vector<int> keys;
  for (const auto& e : *list) keys.push_back(key(e));
  return keys;
}

std::vector<int> concat(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out = a;
  for (int k : b) {
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  return out;
}

GroupingSetList item_sets(const json& item, const KeyFn& key, bool nested) {
  if (!item.contains("GroupingSet")) return {nested ? element_keys(item, key) : std::vector<int>{key(item)}};
  const auto& set = item["GroupingSet"];
  const std::string kind = set.value("kind", "");
  const json content = set.value("content", json::array());
  if (kind == "GROUPING_SET_EMPTY") return {{}};
  if (kind == "GROUPING_SET_SIMPLE") return {element_keys(item, key)};
  GroupingSetList out;
  if (kind == "GROUPING_SET_SETS") {
    for (const auto& c : content) {
      for (auto& s : item_sets(c, key, true)) out.push_back(std::move(s));
      check_count(out.size());
    }
    return out;
  }
  std::vector<std::vector<int>> elements;
  for (const auto& c : content) elements.push_back(element_keys(c, key));
  if (kind == "GROUPING_SET_ROLLUP") {
    // (a, b, c), (a, b), (a), ()
    for (size_t n = elements.size() + 1; n-- > 0;) {
      std::vector<int> keys;
      for (size_t i = 0; i < n; ++i) keys = concat(keys, elements[i]);
      out.push_back(std::move(keys));
    }
    return out;
  }
  if (elements.size() > kMaxCubeElements) throw Error(SqlState::too_many_columns, "CUBE is limited to 12 elements");
  // Every subset, the full one first.
  const size_t all = (size_t{1} << elements.size()) - 1;
  for (size_t mask = all + 1; mask-- > 0;) {
    std::vector<int> keys;
    for (size_t i = 0; i < elements.size(); ++i) {
      if (mask & (size_t{1} << i)) keys = concat(keys, elements[i]);
    }
    out.push_back(std::move(keys));
  }
  return out;
}

}  // namespace

bool has_grouping_sets(const json& group_clause) {
  return std::any_of(group_clause.begin(), group_clause.end(), [](const json& g) { return g.contains("GroupingSet"); });
}

GroupingSetList expand_grouping_sets(const json& group_clause, const KeyFn& key) {
  GroupingSetList sets = {{}};
  for (const auto& item : group_clause) {
    GroupingSetList next;
    for (const auto& right : item_sets(item, key, false)) {
      for (const auto& left : sets) next.push_back(concat(left, right));
      check_count(next.size());
    }
    sets = std::move(next);
  }
  return sets;
}

void remove_duplicate_sets(GroupingSetList& sets) {
  std::vector<std::vector<int>> seen;
  GroupingSetList kept;
  for (auto& set : sets) {
    std::vector<int> sorted = set;
    std::sort(sorted.begin(), sorted.end());
    if (std::find(seen.begin(), seen.end(), sorted) != seen.end()) continue;
    seen.push_back(std::move(sorted));
    kept.push_back(std::move(set));
  }
  sets = std::move(kept);
}

}  // namespace tally::executor
