#include "executor/operators/system_scan.hpp"

#include "common/cancel.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

namespace {

std::vector<OutputColumn> read_columns(const MaterializedRelation& relation, const std::vector<int>& columns) {
  std::vector<OutputColumn> out;
  for (int c : columns) out.push_back(relation.columns[static_cast<size_t>(c)]);
  return out;
}

}  // namespace

SystemScan::SystemScan(std::shared_ptr<const MaterializedRelation> relation, std::string alias,
                       std::vector<int> relation_columns, std::vector<int> layout, size_t space_width,
                       std::vector<ExprPtr> filters)
    : PhysicalOperator(read_columns(*relation, relation_columns), static_cast<double>(relation->rows.rows)),
      relation_(std::move(relation)),
      alias_(std::move(alias)),
      relation_columns_(std::move(relation_columns)),
      space_width_(space_width),
      filters_(std::move(filters)) {
  layout_ = std::move(layout);
}

void SystemScan::run(ExecContext& context, ChunkSink& sink) const {
  if (context.cancel) context.cancel->check();
  // Catalog relations are small: one chunk, copied because sinks may move
  // the vectors out and the relation is shared by every run of the plan.
  DataChunk out;
  const DataChunk made = relation_->rows_at_run ? relation_->rows_at_run(context.parameters) : DataChunk{};
  const DataChunk& rows = relation_->rows_at_run ? made : relation_->rows;
  out.rows = rows.rows;
  for (int c : relation_columns_) out.columns.push_back(rows.columns[static_cast<size_t>(c)]);
  if (!filters_.empty() && !filter_chunk(out, filters_, layout_, space_width_, context.parameters)) return;
  if (out.rows > 0) sink.consume(out);
}

std::string SystemScan::describe() const {
  std::string line = "System Scan on " + relation_->name;
  if (alias_ != relation_->name) line += " " + alias_;
  return line;
}

}  // namespace tally::executor
