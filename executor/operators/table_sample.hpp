#pragma once
// TABLESAMPLE BERNOULLI (p) and SYSTEM (p) [REPEATABLE (seed)] over a table's
// rows, before the query's conditions on them (PostgreSQL's Sample Scan).
// The child is the table's scan with no filter, so its rows come in the
// table's order, and row i of the table is kept where a hash of (seed, i)
// falls below p percent: BERNOULLI decides each row apart, SYSTEM each block
// of kSystemBlockRows rows (PostgreSQL's SYSTEM takes or leaves whole pages).
// With REPEATABLE the same seed over the same rows keeps the same rows;
// without it each run draws a seed of its own.
#include <memory>
#include <string>
#include <vector>

#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

enum class SampleMethod { bernoulli, system };

class TableSample final : public PhysicalOperator {
 public:
  // Rows of one SYSTEM block: about what a PostgreSQL page of a narrow table holds.
  static constexpr uint64_t kSystemBlockRows = 128;

  // `percent` (float4) and `seed` (float8, null: none) are constant
  // expressions, evaluated once per run.
  TableSample(std::unique_ptr<PhysicalOperator> scan, SampleMethod method, ExprPtr percent, ExprPtr seed,
              std::string relation);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override { return "Sample Scan on " + relation_; }
  std::string node_type() const override { return "Sample Scan"; }
  std::vector<std::string> details() const override;

  // Whether row `row` of the table is kept by a sample of `percent` with `seed`.
  static bool keeps(SampleMethod method, uint64_t seed, double percent, uint64_t row);

 private:
  SampleMethod method_;
  ExprPtr percent_, seed_;
  std::string relation_;
};

}  // namespace tally::executor
