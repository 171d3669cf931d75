#pragma once
// UNION / INTERSECT / EXCEPT [ALL] of two operators with the same number of
// columns. Each side's columns are first cast to the result types the
// planner resolved (PostgreSQL's UNION type resolution). UNION ALL streams
// both sides; the others compare whole rows by hash, NULLs equal to NULLs
// (DISTINCT semantics), and count duplicates for the ALL forms: INTERSECT ALL
// keeps min(m, n) copies of a row, EXCEPT ALL max(m - n, 0).
#include <vector>

#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

enum class SetOperationKind { union_, intersect, except };

class SetOperation final : public PhysicalOperator {
 public:
  // `casts[s][c]` converts column c of side s (0 left, 1 right) to the result
  // type, bound over that side's chunk; null where the types already agree.
  SetOperation(SetOperationKind kind, bool all, OperatorPtr left, OperatorPtr right,
               std::vector<std::vector<ExprPtr>> casts, std::vector<OutputColumn> columns);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override;
  std::string node_type() const override { return kind_ == SetOperationKind::union_ && all_ ? "Append" : "SetOp"; }
  std::vector<std::pair<std::string, std::string>> node_properties() const override;
  bool children_are_members() const override { return node_type() == "Append"; }

 private:
  // Runs side `s`, its chunks cast to the result types, into `sink`.
  void run_side(size_t s, ExecContext& context, ChunkSink& sink) const;
  DataChunk collect_side(size_t s, ExecContext& context) const;

  SetOperationKind kind_;
  bool all_;
  std::vector<std::vector<ExprPtr>> casts_;
};

}  // namespace tally::executor
