#include "executor/operators/subquery_scan.hpp"

#include "executor/operators/chunk_ops.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/shared_cte.hpp"
#include "executor/subquery_expr.hpp"

namespace tally::executor {

namespace {

// Whether the subquery's SELECT only evaluates its outputs over its FROM
// clause's operator tree, row for row: nothing groups, sorts, ranks,
// de-duplicates or cuts its rows, and no volatile function needs them in
// order. Such a SELECT streams (ProjectSink) instead of being collected.
bool projects_its_source(const SelectPlan& plan) {
  if (!plan.source || plan.table || plan.aggregate || !plan.grouping_sets.empty() || plan.windows || plan.distinct ||
      !plan.distinct_on.empty() || !plan.sort.empty() || plan.limit || plan.offset ||
      plan.outputs.size() != plan.visible) {
    return false;
  }
  for (const auto& output : plan.outputs) {
    if (!output || has_volatile_function(*output)) return false;
  }
  return true;
}

// Evaluates the subquery's outputs over each chunk of its source and hands
// the result to the outer sink. Both the evaluation and the outer sink's
// own per-chunk work run in prepare(), on the source's worker threads
// (a join's probe parts, a scan's read-ahead), so the rows of a derived
// table reach the query above it on every core, chunk by chunk, instead of
// being appended into one result and passed on by one thread.
class ProjectSink final : public ChunkSink {
 public:
  ProjectSink(const SelectPlan& plan, const ExecContext& context, ChunkSink& next)
      : plan_(plan), parameters_(context.parameters), next_(next) {
    for (const auto& output : plan.outputs) outputs_.push_back(output.get());
  }

  void prepare(DataChunk& chunk) const override {
    auto work = std::make_shared<Projected>();
    work->chunk = project(chunk);
    next_.prepare(work->chunk);
    chunk.rows = work->chunk.rows;
    chunk.prepared = std::move(work);
  }
  bool consume_prepared(DataChunk& chunk) override {
    auto* work = dynamic_cast<Projected*>(chunk.prepared.get());
    if (work == nullptr) return consume(chunk);
    return work->chunk.rows == 0 || next_.consume_prepared(work->chunk);
  }
  bool consume(DataChunk& chunk) override {
    DataChunk out = project(chunk);
    return out.rows == 0 || next_.consume(out);
  }

 private:
  struct Projected final : PreparedWork {
    DataChunk chunk;
  };

  // The outputs of a chunk's rows (its columns that are outputs as they are taken out of it).
  DataChunk project(DataChunk& chunk) const {
    const std::vector<int>& layout = plan_.source->layout();
    DataChunk out;
    out.rows = chunk.rows;
    out.columns = evaluate_taking(outputs_, space_input(chunk, layout, plan_.source_width, parameters_),
                                  columns_by_space(chunk, layout, plan_.source_width));
    return out;
  }

  const SelectPlan& plan_;
  const std::vector<Value>* parameters_;
  ChunkSink& next_;
  std::vector<const Expr*> outputs_;
};

}  // namespace

SubqueryScan::SubqueryScan(std::shared_ptr<const SelectPlan> plan, std::string alias, std::vector<OutputColumn> columns,
                           std::vector<int> layout, std::shared_ptr<const SharedCte> shared)
    : PhysicalOperator(std::move(columns), 1000),
      plan_(std::move(plan)),
      alias_(std::move(alias)),
      shared_(std::move(shared)) {
  layout_ = std::move(layout);
}

void SubqueryScan::run(ExecContext& context, ChunkSink& sink) const {
  ExecContext inner = context;
  inner.stream_to_client = false;
  inner.explain = nullptr;
  // The inner plan's columns are a space of their own: the key tests of
  // joins above read other columns.
  inner.key_tests.clear();
  if (shared_) {
    // All its rows, whatever keys this reference's grouped run wants; sinks
    // may move the vectors out, so the shared rows are copied.
    inner.group_key_filter = nullptr;
    const std::shared_ptr<const ResultSet> rows = shared_->rows(inner);
    DataChunk chunk;
    chunk.rows = rows->rows;
    chunk.columns = rows->columns;
    if (chunk.rows > 0) sink.consume(chunk);
    return;
  }
  if (projects_its_source(*plan_) && inner.group_key_filter == nullptr) {
    // Its operators' lines (a scan's selection on the GPU) are the
    // statement's: no aggregate of its own reports beside them.
    inner.explain = context.explain;
    for (const auto* subquery : plan_->subqueries) subquery->reset();
    for (const auto& cte : plan_->shared_ctes) cte->reset();
    ProjectSink project(*plan_, inner, sink);
    run_operator(*plan_->source, inner, project);
    return;
  }
  // Its aggregate's lines (the engine, the GPU's times) follow the
  // statement's, each named by this scan: the statement's aggregate
  // reports its own beside them.
  std::vector<std::string> lines;
  if (context.explain != nullptr) inner.explain = &lines;
  ResultSet result = run_select(*plan_, inner);
  if (context.explain != nullptr) {
    for (const std::string& line : lines) context.explain->push_back(describe() + ": " + line);
  }
  DataChunk chunk;
  chunk.rows = result.rows;
  chunk.columns = std::move(result.columns);
  if (chunk.rows > 0) sink.consume(chunk);
}

std::vector<ExplainNode> SubqueryScan::subplans(const OperatorActuals* actuals) const {
  return {explain_select(*plan_, actuals)};
}

}  // namespace tally::executor
