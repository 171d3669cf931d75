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

// An item to join, or what is joined so far: its column space indexes,
// estimated rows, and how many of its columns the query reads (what a join
// holding its rows stores of each).
struct JoinItem {
  std::set<int> cols;
  double est = 1;
  double width = 1;
};

// Estimated rows of joining two items, nullopt when no equality connects them.
using JoinEstimate = std::function<std::optional<double>(const JoinItem&, const JoinItem&)>;

// The item to start from: every item is tried, and the greedy order whose
// joins produce the fewest estimated rows, and hold the fewest values, in
// all wins. A held row's values are copied and hashed, where a streamed row
// is looked up: TPC-H Q7's lineitem rows of two nations' suppliers, held
// with their five columns for orders and again for customer, cost more
// than two nations' customers and then their orders, held with two to four
// columns for lineitem, though both orders produce as many rows. Starting from the
// smallest item instead can route a fact table through its unfiltered
// dimensions before the filtered one that would drop most of its rows
// (TPC-H Q9: lineitem with supplier before part). Ties keep the smallest
// first item.
size_t cheapest_join_start(const std::vector<JoinItem>& items, const JoinEstimate& estimate);

}  // namespace tally::executor
