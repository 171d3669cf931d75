#include "executor/join_order.hpp"

#include <algorithm>

namespace tally::executor {

namespace {

// The sum of the estimated rows of every join of the greedy order from
// `first`, and of the values each join holds (its smaller side's rows times
// their width).
double greedy_cost(const std::vector<JoinItem>& items, size_t first, const JoinEstimate& estimate) {
  JoinItem current = items[first];
  std::vector<size_t> left;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i != first) left.push_back(i);
  }
  double cost = 0;
  while (!left.empty()) {
    size_t pick = left.size();
    double pick_est = 0;
    for (size_t j = 0; j < left.size(); ++j) {
      const JoinItem& next = items[left[j]];
      const std::optional<double> est = estimate(current, next);
      if (!est) continue;
      if (pick == left.size() || *est < pick_est || (*est == pick_est && next.est < items[left[pick]].est)) {
        pick = j;
        pick_est = *est;
      }
    }
    if (pick == left.size()) {
      // Nothing connects: the smallest item, as a cross join.
      pick = static_cast<size_t>(std::min_element(left.begin(), left.end(), [&](size_t a, size_t b) {
                                   return items[a].est < items[b].est;
                                 }) - left.begin());
      pick_est = current.est * items[left[pick]].est;
    }
    const JoinItem& next = items[left[pick]];
    const JoinItem& held = current.est <= next.est ? current : next;
    cost += pick_est + held.est * held.width;
    current.cols.insert(next.cols.begin(), next.cols.end());
    current.width += next.width;
    current.est = pick_est;
    left.erase(left.begin() + static_cast<long>(pick));
  }
  return cost;
}

}  // namespace

size_t cheapest_join_start(const std::vector<JoinItem>& items, const JoinEstimate& estimate) {
  size_t best = 0;
  double best_cost = 0;
  for (size_t first = 0; first < items.size(); ++first) {
    const double cost = greedy_cost(items, first, estimate);
    if (first == 0 || cost < best_cost || (cost == best_cost && items[first].est < items[best].est)) {
      best = first;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace tally::executor
