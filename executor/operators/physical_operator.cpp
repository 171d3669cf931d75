#include "executor/operators/physical_operator.hpp"

#include <algorithm>

#include "executor/explain_costs.hpp"
#include "executor/operators/chunk_ops.hpp"

namespace tally::executor {

CollectSink::CollectSink(const std::vector<OutputColumn>& columns, long long limit) : limit_(limit) {
  for (const auto& c : columns) result.columns.emplace_back(c.type);
  memory_ = BlockReservation(materialized_row_bytes(result.columns), size_t{1} << 16);
}

bool CollectSink::consume(DataChunk& chunk) {
  memory_.add(chunk.rows);
  for (size_t c = 0; c < chunk.columns.size(); ++c) {
    if (result.rows == 0 && result.columns[c].count == 0) {
      result.columns[c] = std::move(chunk.columns[c]);
    } else {
      append_vector(result.columns[c], chunk.columns[c]);
    }
  }
  result.rows += chunk.rows;
  return limit_ < 0 || static_cast<long long>(result.rows) < limit_;
}

DataChunk collect(const PhysicalOperator& op, ExecContext& context, long long limit) {
  CollectSink sink(op.columns(), limit);
  op.run(context, sink);
  return std::move(sink.result);
}

std::string PhysicalOperator::node_type() const {
  const std::string line = describe();
  return line.substr(0, std::min(line.find(" on "), line.find(" (")));
}

ExplainNode explain_operator(const PhysicalOperator& op) {
  ExplainNode node;
  node.label = op.describe();
  node.node_type = op.node_type();
  node.properties = op.node_properties();
  node.cost = operator_cost(op);
  node.details = op.details();
  node.members = op.children_are_members();
  node.subplans = op.subplans();
  for (const auto& child : op.children()) node.children.push_back(explain_operator(*child));
  return node;
}

}  // namespace tally::executor
