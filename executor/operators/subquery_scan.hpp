#pragma once
// Subquery Scan: a derived table or WITH query in FROM; runs its SELECT and
// pushes the rows (a shared WITH query's: those of its one run).
#include <memory>

#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

struct SelectPlan;
class SharedCte;

class SubqueryScan final : public PhysicalOperator {
 public:
  SubqueryScan(std::shared_ptr<const SelectPlan> plan, std::string alias, std::vector<OutputColumn> columns,
               std::vector<int> layout, std::shared_ptr<const SharedCte> shared = nullptr);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override { return "Subquery Scan on " + alias_; }
  std::vector<std::pair<std::string, std::string>> node_properties() const override { return {{"Alias", alias_}}; }
  std::vector<ExplainNode> subplans(const OperatorActuals* actuals) const override;
  const std::shared_ptr<const SelectPlan>& plan() const { return plan_; }

 private:
  std::shared_ptr<const SelectPlan> plan_;
  std::string alias_;
  std::shared_ptr<const SharedCte> shared_;
};

}  // namespace tally::executor
