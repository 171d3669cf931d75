#pragma once
// The order the planner joins inner items in (from_planner.cpp builds a
// left-deep tree: each item joined to what is built so far).
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

// Items this many or fewer are ordered by trying every order (each set of
// items joined once, 2^n sets); more by the greedy orders below.
constexpr size_t kMaxExhaustiveJoinItems = 10;

// The order whose joins produce the fewest estimated rows, and hold the
// fewest values, in all: a held row's values are copied and hashed, where a
// streamed row is looked up (TPC-H Q7's lineitem rows of two nations'
// suppliers, held with their five columns for orders and again for
// customer, cost more than two nations' customers and then their orders,
// held with two to four columns for lineitem, though both orders produce as
// many rows). Every order of connected joins is weighed where the items are
// few: a greedy order, each step the connected item with the fewest joined
// rows, can take a small item that leads the wrong way (TPC-H Q5 from region:
// nation, then the one region's suppliers, then all of their lineitem rows
// before orders cuts them) or start from an item whose first join is large
// (Q5 from customer: all of its rows joined with nation before region drops
// four fifths). A cross join only where no item connects (the smallest
// one). More items: the greedy order from the start whose order costs
// least. Ties keep the earlier item.
std::vector<size_t> cheapest_join_order(const std::vector<JoinItem>& items, const JoinEstimate& estimate);

}  // namespace tally::executor
