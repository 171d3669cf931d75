#pragma once
// Where the planner's greedy join order starts (from_planner.cpp joins
// inner items greedily: each step the connected item with the fewest
// estimated result rows).
#include <cstddef>
#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace tally::executor {

// An item to join, or what is joined so far: its column space indexes and
// estimated rows.
struct JoinItem {
  std::set<int> cols;
  double est = 1;
};

// Estimated rows of joining two items, nullopt when no equality connects them.
using JoinEstimate = std::function<std::optional<double>(const JoinItem&, const JoinItem&)>;

// The item to start from: every item is tried, and the greedy order whose
// joins produce the fewest estimated rows in all wins. Starting from the
// smallest item instead can route a fact table through its unfiltered
// dimensions before the filtered one that would drop most of its rows
// (TPC-H Q9: lineitem with supplier before part). Ties keep the smallest
// first item.
size_t cheapest_join_start(const std::vector<JoinItem>& items, const JoinEstimate& estimate);

}  // namespace tally::executor
