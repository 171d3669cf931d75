#include "executor/operators/physical_operator.hpp"


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

void explain_operator(const PhysicalOperator& op, std::vector<std::string>& lines, int depth) {
  const std::string pad = depth == 0 ? "" : std::string(static_cast<size_t>(depth - 1) * 6 + 2, ' ') + "->  ";
  lines.push_back(pad + op.describe() + format_cost(operator_cost(op)));
  const std::string detail_pad(static_cast<size_t>(depth) * 6 + 2, ' ');
  for (const auto& d : op.details()) lines.push_back(detail_pad + d);
  for (const auto& child : op.children()) explain_operator(*child, lines, depth + 1);
}

}  // namespace tally::executor
