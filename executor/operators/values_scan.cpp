#include "executor/operators/values_scan.hpp"

#include "executor/operators/chunk_ops.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

ValuesScan::ValuesScan(std::vector<std::vector<ExprPtr>> rows, std::vector<OutputColumn> columns)
    : PhysicalOperator(std::move(columns), static_cast<double>(rows.size())), rows_(std::move(rows)) {
  for (size_t i = 0; i < columns_.size(); ++i) layout_.push_back(static_cast<int>(i));
}

void ValuesScan::run(ExecContext& context, ChunkSink& sink) const {
  if (context.cancel) context.cancel->check();
  DataChunk chunk;
  for (const auto& c : columns_) chunk.columns.emplace_back(c.type);
  EvalInput one;
  one.rows = 1;
  one.parameters = context.parameters;
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) append_vector(chunk.columns[c], row[c]->evaluate(one));
  }
  chunk.rows = rows_.size();
  if (chunk.rows > 0) sink.consume(chunk);
}

}  // namespace tally::executor
