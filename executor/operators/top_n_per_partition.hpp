#pragma once
// Top-n per partition: a window subquery whose ranking result an outer
// filter bounds (`WHERE rn <= k` over `row_number() OVER (PARTITION BY p
// ORDER BY o) AS rn`, also rank and dense_rank) needs, per partition, only
// the rows ranked k or better. This operator streams its child and keeps
// just those candidates instead of sorting every row: a row worse than the
// k-th row its partition already holds is dropped with one hash probe and
// one comparison, and the candidates are pruned (sorted, cut at rank k)
// whenever they double. The survivors then go through the ordinary window
// evaluation (window.hpp), so the ranking values and every column are what
// WindowAgg gives, and the rows ranked above k that pruning left are cut.
// Every row out is ranked k or better: an outer `rn <= k` is implied
// (implied_by_top_n), and the planner leaves it out.
//
// Pruning is sound because a rank can only grow when rows are added: a row
// that k rows (or k distinct values, for dense_rank) precede in a subset of
// its partition is preceded by them in the whole partition too.
#include <cstdint>
#include <memory>
#include <optional>

#include "executor/operators/physical_operator.hpp"
#include "executor/top_n_groups.hpp"
#include "executor/window_call.hpp"

namespace tally::executor {

class TopNPerPartition final : public PhysicalOperator {
 public:
  // `call`: the ranking call the filter bounds; rows whose value of it is
  // above `k` are not needed. Output as WindowOperator's (window.hpp).
  // `groups`: the same rows as an aggregation (top_n_groups.hpp), run
  // instead where it pays.
  TopNPerPartition(std::unique_ptr<PhysicalOperator> child, std::shared_ptr<const WindowPlan> plan,
                   size_t space_width, size_t call, int64_t k, std::optional<TopNGroups> groups = std::nullopt);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override { return "WindowAgg"; }
  std::vector<std::string> details() const override;
  // The bound: every row out has its ranking value at most k.
  int64_t k() const { return k_; }

 private:
  std::shared_ptr<const WindowPlan> plan_;
  size_t space_width_;
  size_t call_;
  int64_t k_;
  std::optional<TopNGroups> groups_;
  // EXPLAIN ANALYZE: the aggregation's own lines when the groups' form ran
  // (written by run(), read by details() after it).
  mutable std::vector<std::string> groups_lines_;
};

// The largest value of column `column` (a bigint ranking result) that the
// conjunct lets through, when it compares that column with an integer
// constant: `rn <= 2`, `rn < 3`, `3 >= rn`, `rn = 2` all give 2.
std::optional<int64_t> ranking_bound(const Expr& conjunct, int column);

// Whether every row ranked k or better passes the conjunct over column
// `column`: `rn <= c` or `rn < c + 1` with c >= k (not `rn = c`, which
// drops the better ranks).
bool implied_by_top_n(const Expr& conjunct, int column, int64_t k);

// Whether `plan` may run as a top-n of call `call`: that call and every
// other one is a row_number, rank or dense_rank over the same PARTITION BY
// and ORDER BY, so none needs the rows ranked below the bound.
bool top_n_applies(const WindowPlan& plan, size_t call);

}  // namespace tally::executor
