#pragma once
// Hash Join (and Nested Loop where no equality connects the sides): the build
// side is drained into one chunk and hashed on its key columns; the probe
// side streams through. Every join kind is one operator: which unmatched rows
// are kept (outer joins), or whether only probe rows with (semi) or without
// (anti) a match come out. A residual condition over both sides decides, for
// each key match, whether the rows join (an outer join's ON beyond its
// equalities, EXISTS's non-equality correlation).
#include <memory>
#include <set>
#include <vector>

#include "executor/operators/physical_operator.hpp"

namespace tally::executor {

enum class JoinKind { inner, probe_outer, build_outer, full, semi, anti };

class HashJoin final : public PhysicalOperator {
 public:
  // Keys are bound against the query's column space (`space_width` columns):
  // probe_keys[i] over the probe side, build_keys[i] over the build side, of
  // one type each pair. Empty keys: every pair is a candidate (nested loop).
  HashJoin(JoinKind kind, std::unique_ptr<PhysicalOperator> probe, std::unique_ptr<PhysicalOperator> build,
           std::vector<ExprPtr> probe_keys, std::vector<ExprPtr> build_keys, std::vector<ExprPtr> residual, size_t space_width,
           double estimated_rows);
  // Outputs only the columns of the two sides whose column-space indexes
  // are in `needed` (at least one), in the same order: a join level
  // gathers, and the levels above copy, only what a later condition or the
  // query's result reads. A semi or anti join keeps every probe column.
  void keep_outputs(const std::set<int>& needed);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override;
  std::vector<std::string> details() const override;
  std::string node_type() const override { return build_keys_.empty() ? "Nested Loop" : "Hash Join"; }
  std::vector<std::pair<std::string, std::string>> node_properties() const override;
  JoinKind kind() const { return kind_; }
  const std::vector<ExprPtr>& probe_keys() const { return probe_keys_; }
  const std::vector<ExprPtr>& build_keys() const { return build_keys_; }
  const std::vector<ExprPtr>& residual() const { return residual_; }

 private:
  // A semi or anti join whose probe side is estimated this many times
  // smaller than its build side is run the other way round
  // (run_semi_reversed): TPC-H Q21's few late suppliers' orders against all
  // of lineitem hash a few thousand rows instead of millions.
  static constexpr double kReversedSemiRatio = 4;
  // Holds and hashes the probe side's rows, streams the build side past
  // them marking the rows that match, then passes on the probe rows that
  // matched (semi) or did not (anti), in their order.
  void run_semi_reversed(ExecContext& context, ChunkSink& sink) const;

  JoinKind kind_;
  // The probe side's and the build side's columns this join outputs.
  std::vector<size_t> probe_out_, build_out_;
  std::vector<ExprPtr> probe_keys_, build_keys_;
  std::vector<ExprPtr> residual_;  // conjuncts
  size_t space_width_;
};

}  // namespace tally::executor
