#pragma once
// Nested Loop over a LATERAL subquery (or a set-returning function in FROM
// whose arguments read the FROM items before it): for each row of the left
// side, the subquery's plan runs with that row's values of the columns it
// reads (its OuterRefExprs), once per distinct tuple of those values in a
// run (results kept for reuse up to a bound), and its rows are joined to the
// left row, in rounds of at most kPairsPerRound pairs. An inner join keeps the
// pairs the ON conditions accept; a LEFT join also keeps each left row that
// has none, with NULLs on the lateral side (PostgreSQL's nested loop with
// the subquery as its parameterized inner side).
#include <memory>
#include <string>
#include <vector>

#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

struct SelectPlan;

class LateralJoin final : public PhysicalOperator {
 public:
  // `correlated[i]` (bound against the query's column space of `width`
  // columns) is the value the plan's OuterRefExpr slot i reads; the plan's
  // visible outputs land at `lateral_layout`; `on` is bound against the
  // column space.
  LateralJoin(std::unique_ptr<PhysicalOperator> left, std::shared_ptr<const SelectPlan> plan,
              std::vector<ExprPtr> correlated, std::string alias, std::vector<OutputColumn> lateral_columns,
              std::vector<int> lateral_layout, bool left_join, std::vector<ExprPtr> on, size_t width, double estimate);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override { return left_join_ ? "Nested Loop Left Join" : "Nested Loop"; }
  std::string node_type() const override { return "Nested Loop"; }
  std::vector<std::pair<std::string, std::string>> node_properties() const override {
    return {{"Join Type", left_join_ ? "Left" : "Inner"}};
  }
  std::vector<std::string> details() const override;
  std::vector<ExplainNode> subplans(const OperatorActuals* actuals) const override;

 private:
  std::shared_ptr<const SelectPlan> plan_;
  std::vector<ExprPtr> correlated_;
  std::string alias_;
  size_t lateral_width_;
  bool left_join_;
  std::vector<ExprPtr> on_;
  size_t width_;
};

}  // namespace tally::executor
