#pragma once
// Values Scan: the rows of a VALUES list, each expression already cast to its
// column's type (PostgreSQL resolves one type per column across the rows).
#include <vector>

#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

class ValuesScan final : public PhysicalOperator {
 public:
  ValuesScan(std::vector<std::vector<ExprPtr>> rows, std::vector<OutputColumn> columns);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override { return "Values Scan"; }

 private:
  std::vector<std::vector<ExprPtr>> rows_;
};

}  // namespace tally::executor
