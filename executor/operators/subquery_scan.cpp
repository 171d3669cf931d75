#include "executor/operators/subquery_scan.hpp"

#include "executor/select_plan.hpp"

namespace tally::executor {

SubqueryScan::SubqueryScan(std::shared_ptr<const SelectPlan> plan, std::string alias, std::vector<OutputColumn> columns,
                           std::vector<int> layout)
    : PhysicalOperator(std::move(columns), 1000), plan_(std::move(plan)), alias_(std::move(alias)) {
  layout_ = std::move(layout);
}

void SubqueryScan::run(ExecContext& context, ChunkSink& sink) const {
  ExecContext inner = context;
  inner.stream_to_client = false;
  inner.explain = nullptr;
  ResultSet result = run_select(*plan_, inner);
  DataChunk chunk;
  chunk.rows = result.rows;
  chunk.columns = std::move(result.columns);
  if (chunk.rows > 0) sink.consume(chunk);
}

std::vector<ExplainNode> SubqueryScan::subplans(const OperatorActuals* actuals) const {
  return {explain_select(*plan_, actuals)};
}

}  // namespace tally::executor
