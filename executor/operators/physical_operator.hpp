#pragma once
// The operator interface of the query engine (DESIGN.md section 5): a plan is
// a tree of immutable PhysicalOperators; running one pushes its whole output,
// chunk by chunk, into a ChunkSink. A pipeline breaker (hash join build side,
// aggregate, sort) first drains its child into a sink of its own, then pushes
// its output. What changes while a query runs lives on the stack of run(), so
// one plan can run several times (a correlated subquery, a cursor).
#include <cstddef>
#include <optional>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/memory_tracker.hpp"
#include "common/sql_type.hpp"
#include "executor/explain_tree.hpp"
#include "executor/expression.hpp"
#include "executor/prepared_work.hpp"
#include "executor/value.hpp"

namespace tally::executor {

struct ExecContext;
class OperatorActuals;

// Rows of equal length, one Vector per output column of the operator that
// produced them.
struct DataChunk {
  size_t rows = 0;
  std::vector<Vector> columns;
  std::shared_ptr<PreparedWork> prepared;  // set by ChunkSink::prepare only
};

class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  // Takes one chunk (the sink may move its vectors out). Returns false when it
  // wants no more rows (LIMIT reached, EXISTS answered): the source stops.
  virtual bool consume(DataChunk& chunk) = 0;
  // A sink's work on a chunk that reads no state other chunks change
  // (filtering, evaluating expressions), split out of consume() so that a
  // source with chunks in flight on worker threads (TableScan's read-ahead,
  // a hash join's probe parts) runs it there, for several chunks at once:
  // such a source calls prepare() on the worker, then consume_prepared() in
  // chunk order, and passes on no chunk prepare() left empty. Any other
  // source calls consume(), which does both. prepare() must be thread-safe.
  virtual void prepare(DataChunk& /*chunk*/) const {}
  virtual bool consume_prepared(DataChunk& chunk) { return consume(chunk); }
};

// A sink whose consume() is its prepare() then its consume_prepared().
class PreparingSink : public ChunkSink {
 public:
  bool consume(DataChunk& chunk) final {
    prepare(chunk);
    return chunk.rows == 0 || consume_prepared(chunk);
  }
  bool consume_prepared(DataChunk& chunk) override = 0;
};

struct OutputColumn {
  std::string name;
  SqlType type;
};

class PhysicalOperator {
 public:
  PhysicalOperator(std::vector<OutputColumn> columns, double estimated_rows)
      : columns_(std::move(columns)), estimated_rows_(estimated_rows) {}
  virtual ~PhysicalOperator() = default;
  PhysicalOperator(const PhysicalOperator&) = delete;
  PhysicalOperator& operator=(const PhysicalOperator&) = delete;

  const std::vector<OutputColumn>& columns() const { return columns_; }
  // The planner's row estimate (table statistics; EXPLAIN shows it).
  double estimated_rows() const { return estimated_rows_; }
  const std::vector<std::unique_ptr<PhysicalOperator>>& children() const { return children_; }
  // Where each output column sits in the column space of the query the
  // operator belongs to (expressions are bound against that space, so an
  // operator's chunk is read through space_input in chunk_ops.hpp).
  const std::vector<int>& layout() const { return layout_; }
  void set_layout(std::vector<int> layout) { layout_ = std::move(layout); }

  // Pushes the operator's whole output into `sink`; returns early once the
  // sink answers false. Checks the context's cancel token between chunks.
  virtual void run(ExecContext& context, ChunkSink& sink) const = 0;
  // The EXPLAIN line of this node ("Hash Join (Inner) on ...", "Seq Scan on t").
  virtual std::string describe() const = 0;
  // Extra EXPLAIN lines under the node (conditions, filters).
  virtual std::vector<std::string> details() const { return {}; }
  // EXPLAIN's structured formats: PostgreSQL's "Node Type" of the node
  // (by default the line up to " on " or " (") and the keys PostgreSQL
  // gives it ("Relation Name", "Alias", "Join Type", ...).
  virtual std::string node_type() const;
  virtual std::vector<std::pair<std::string, std::string>> node_properties() const { return {}; }
  // Plans run inside the node (a subquery's), shown under it, with their
  // EXPLAIN ANALYZE figures when `actuals` has them.
  virtual std::vector<ExplainNode> subplans(const OperatorActuals* /*actuals*/) const { return {}; }
  // Whether the children are members (an Append's) rather than outer and inner.
  virtual bool children_are_members() const { return false; }

 protected:
  std::vector<OutputColumn> columns_;
  double estimated_rows_ = 0;
  std::vector<std::unique_ptr<PhysicalOperator>> children_;
  std::vector<int> layout_;
};

using OperatorPtr = std::unique_ptr<PhysicalOperator>;

// A sink that keeps every chunk, concatenated per column (the build side of a
// join, a subquery's result). `limit` (>= 0) stops the source after that many rows.
class CollectSink final : public ChunkSink {
 public:
  explicit CollectSink(const std::vector<OutputColumn>& columns, long long limit = -1);
  bool consume(DataChunk& chunk) override;
  DataChunk result;

 private:
  long long limit_;
  BlockReservation memory_;  // the collected rows, against the statement's budget
};

// What EXPLAIN ANALYZE reports of each operator that ran, as PostgreSQL's
// "(actual time=first..total rows=N loops=L)": milliseconds from the start
// of a run to its first and to its last row pushed, its children's time
// included, averaged over its runs (a subquery's plan may run per outer
// row), and the rows pushed per run. Beside them, the process's CPU time
// over the same runs (every thread's, children included): CPU time over
// wall time is how many cores the operator kept busy, which says where a
// plan runs on one thread while the host has many.
class OperatorActuals {
 public:
  struct Actual {
    double first_ms = 0, total_ms = 0, cpu_ms = 0;  // summed over the loops
    uint64_t rows = 0, loops = 0;
  };
  void add(const PhysicalOperator* op, const Actual& run);
  // Summed over its runs; nothing for an operator that never ran.
  std::optional<Actual> find(const PhysicalOperator* op) const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<const PhysicalOperator*, Actual> actuals_;
};

// Runs `op` into `sink` (by `run`, op.run when empty): what every operator
// calls to run a child, so that EXPLAIN ANALYZE (ExecContext::actuals) can
// time it and count its rows.
void run_operator(const PhysicalOperator& op, ExecContext& context, ChunkSink& sink,
                  const std::function<void(ChunkSink&)>& run = {});

// Runs `op` to completion and returns its rows as one chunk.
DataChunk collect(const PhysicalOperator& op, ExecContext& context, long long limit = -1);

// The EXPLAIN tree of an operator tree, with each node's cost, and with
// `actuals` (EXPLAIN ANALYZE, after the run) each node's actual figures.
ExplainNode explain_operator(const PhysicalOperator& op, const OperatorActuals* actuals = nullptr);

}  // namespace tally::executor
