#include "executor/operators/physical_operator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>

#include "common/process_cpu_time.hpp"

#include "executor/explain_costs.hpp"
#include "executor/select_plan.hpp"
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
  run_operator(op, context, sink);
  return std::move(sink.result);
}

void OperatorActuals::add(const PhysicalOperator* op, const Actual& run) {
  const std::lock_guard lock(mutex_);
  Actual& a = actuals_[op];
  a.first_ms += run.first_ms;
  a.total_ms += run.total_ms;
  a.cpu_ms += run.cpu_ms;
  a.rows += run.rows;
  a.loops += run.loops;
}

std::optional<OperatorActuals::Actual> OperatorActuals::find(const PhysicalOperator* op) const {
  const std::lock_guard lock(mutex_);
  const auto it = actuals_.find(op);
  if (it == actuals_.end()) return std::nullopt;
  return it->second;
}

namespace {

// Counts the rows an operator pushes, and when its first row came: rows are
// counted where the source hands them on (prepare, on the source's workers,
// or consume), before the sink's own prepare may drop some.
class CountingSink final : public ChunkSink {
 public:
  CountingSink(ChunkSink& next, std::chrono::steady_clock::time_point start) : next_(next), start_(start) {}
  bool consume(DataChunk& chunk) override {
    count(chunk.rows);
    return next_.consume(chunk);
  }
  void prepare(DataChunk& chunk) const override {
    count(chunk.rows);
    next_.prepare(chunk);
  }
  bool consume_prepared(DataChunk& chunk) override { return next_.consume_prepared(chunk); }
  uint64_t rows() const { return rows_.load(); }
  double first_ms() const { return first_ms_.load(); }

 private:
  void count(size_t rows) const {
    if (rows == 0) return;
    if (rows_.fetch_add(rows) == 0) {
      first_ms_.store(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
    }
  }
  ChunkSink& next_;
  std::chrono::steady_clock::time_point start_;
  mutable std::atomic<uint64_t> rows_{0};
  mutable std::atomic<double> first_ms_{0};
};

}  // namespace

void run_operator(const PhysicalOperator& op, ExecContext& context, ChunkSink& sink,
                  const std::function<void(ChunkSink&)>& run) {
  if (context.actuals == nullptr) {
    if (run) run(sink);
    else op.run(context, sink);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_ms();
  CountingSink counting(sink, start);
  if (run) run(counting);
  else op.run(context, counting);
  const double total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const uint64_t rows = counting.rows();
  context.actuals->add(&op, {rows > 0 ? counting.first_ms() : total, total, process_cpu_ms() - cpu_start, rows, 1});
}

std::string PhysicalOperator::node_type() const {
  const std::string line = describe();
  return line.substr(0, std::min(line.find(" on "), line.find(" (")));
}

ExplainNode explain_operator(const PhysicalOperator& op, const OperatorActuals* actuals) {
  ExplainNode node;
  if (actuals != nullptr) {
    node.analyzed = true;
    if (const auto a = actuals->find(&op)) {
      const double loops = static_cast<double>(std::max<uint64_t>(1, a->loops));
      node.actual = ExplainActual{a->first_ms / loops, a->total_ms / loops, a->cpu_ms / loops, static_cast<double>(a->rows) / loops,
                                  a->loops};
    }
  }
  node.label = op.describe();
  node.node_type = op.node_type();
  node.properties = op.node_properties();
  node.cost = operator_cost(op);
  node.details = op.details();
  node.members = op.children_are_members();
  node.subplans = op.subplans(actuals);
  for (const auto& child : op.children()) node.children.push_back(explain_operator(*child, actuals));
  return node;
}

}  // namespace tally::executor
