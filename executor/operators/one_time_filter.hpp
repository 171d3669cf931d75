#pragma once
// Result with a One-Time Filter (PostgreSQL's gating node): conditions of a
// WHERE that read no column of the query's rows (constants, parameters, an
// outer query's values, uncorrelated subqueries; no volatile function) are
// evaluated once per run, before the child runs. Where one is not true, the
// child never runs: `WHERE 1 = 0` over a join (what BI tools send to learn
// a query's columns) or `WHERE x ~ NULL` answers at once instead of after
// the join.
#include <memory>
#include <string>
#include <vector>

#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

// Whether a condition is tested once rather than per row: it reads no
// column of the rows and calls no volatile function.
bool is_one_time_condition(Expr& condition);
// Whether `condition` (reading no column) is true, evaluated once.
bool holds_once(const Expr& condition, const std::vector<Value>* parameters);
// Whether every conjunct of `where` that reads no column and calls no
// volatile function holds (holds_once): false where one of them rules out
// every row. For the single-table path, whose WHERE is one expression.
bool one_time_conditions_hold(const Expr& where, const std::vector<Value>* parameters);

class OneTimeFilter final : public PhysicalOperator {
 public:
  // `conditions` are bound against a column space of `space_width` columns
  // and read none of them.
  OneTimeFilter(std::unique_ptr<PhysicalOperator> child, std::vector<ExprPtr> conditions, size_t space_width);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override { return "Result"; }
  std::vector<std::string> details() const override {
    return {"One-Time Filter: " + std::to_string(conditions_.size()) + " condition(s)"};
  }

 private:
  std::vector<ExprPtr> conditions_;
  size_t space_width_;
};

}  // namespace tally::executor
