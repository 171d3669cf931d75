#include "executor/join_order.hpp"

#include <algorithm>

namespace tally::executor {

namespace {

// What joining `next` to `current` adds to an order's cost: the joined rows
// and the values the join holds (its smaller side's rows times their width).
double step_cost(const JoinItem& current, const JoinItem& next, double joined_rows) {
  const JoinItem& held = current.est <= next.est ? current : next;
  return joined_rows + held.est * held.width;
}

void join_into(JoinItem& current, const JoinItem& next, double joined_rows) {
  current.cols.insert(next.cols.begin(), next.cols.end());
  current.width += next.width;
  current.est = joined_rows;
}

// The greedy order from `first` and its cost.
std::pair<std::vector<size_t>, double> greedy_order(const std::vector<JoinItem>& items, size_t first,
                                                    const JoinEstimate& estimate) {
  JoinItem current = items[first];
  std::vector<size_t> order{first}, left;
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
    cost += step_cost(current, next, pick_est);
    join_into(current, next, pick_est);
    order.push_back(left[pick]);
    left.erase(left.begin() + static_cast<long>(pick));
  }
  return {order, cost};
}

// Every left-deep order, each set of items joined once: the cheapest way to
// join each set, from the cheapest ways to join its sets of one item fewer.
std::vector<size_t> exhaustive_order(const std::vector<JoinItem>& items, const JoinEstimate& estimate) {
  const size_t n = items.size();
  struct Best {
    bool reached = false;
    double cost = 0;
    JoinItem joined;
    std::vector<size_t> order;
  };
  std::vector<Best> best(size_t{1} << n);
  for (size_t i = 0; i < n; ++i) best[size_t{1} << i] = Best{true, 0, items[i], {i}};
  for (size_t set = 1; set < best.size(); ++set) {
    const Best& from = best[set];
    if (!from.reached || set == best.size() - 1) continue;
    std::vector<std::pair<size_t, double>> steps;  // items joined by an equality, and their joined rows
    for (size_t j = 0; j < n; ++j) {
      if (set & (size_t{1} << j)) continue;
      if (const std::optional<double> est = estimate(from.joined, items[j])) steps.push_back({j, *est});
    }
    if (steps.empty()) {
      // Nothing connects: the smallest item, as a cross join.
      size_t smallest = n;
      for (size_t j = 0; j < n; ++j) {
        if (!(set & (size_t{1} << j)) && (smallest == n || items[j].est < items[smallest].est)) smallest = j;
      }
      steps.push_back({smallest, from.joined.est * items[smallest].est});
    }
    for (const auto& [j, rows] : steps) {
      const double cost = from.cost + step_cost(from.joined, items[j], rows);
      Best& to = best[set | (size_t{1} << j)];
      if (to.reached && cost >= to.cost) continue;
      to.reached = true;
      to.cost = cost;
      to.joined = from.joined;
      join_into(to.joined, items[j], rows);
      to.order = from.order;
      to.order.push_back(j);
    }
  }
  return best.back().order;
}

}  // namespace

std::vector<size_t> cheapest_join_order(const std::vector<JoinItem>& items, const JoinEstimate& estimate) {
  if (items.size() <= 1) return items.empty() ? std::vector<size_t>{} : std::vector<size_t>{0};
  if (items.size() <= kMaxExhaustiveJoinItems) return exhaustive_order(items, estimate);
  std::vector<size_t> best;
  double best_cost = 0;
  for (size_t first = 0; first < items.size(); ++first) {
    auto [order, cost] = greedy_order(items, first, estimate);
    if (first == 0 || cost < best_cost) {
      best = std::move(order);
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace tally::executor
