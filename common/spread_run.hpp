#pragma once
// One aggregation spread over several runs, each over a disjoint part of the
// input (one per GPU: gpu/engine/multi_device_engine.hpp): chunk c goes to
// run (storage chunk id of c) mod N, in hold() and sink() alike, so that a
// column a run promised to hold is the one that run reads, and the same
// chunk goes to the same run in every query. The runs' partial states are
// merged at the end (common/partial_states_merge.hpp), on the host's
// threads. For specs that mergeable() accepts.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "common/parallel_tasks.hpp"

namespace tally {

class SpreadRun final : public AggregationRun {
 public:
  // runs: made from `spec` with compact_result off (merging reads the full
  // form); names: one per run, for EXPLAIN ANALYZE; enter(i): called before
  // each call into runs[i] (the GPU engine makes run i's device current);
  // parallel: the host threads that finalize the runs (each run on one,
  // enter(i) called on it first) and merge their partial states (on up to
  // spec.threads); none: the calling thread alone.
  SpreadRun(const AggregationSpec& spec, std::vector<std::unique_ptr<AggregationRun>> runs,
            std::vector<std::string> names, std::function<void(size_t)> enter, ParallelTasks parallel = {});
  // Each run is released after enter(i), as it was made and used.
  ~SpreadRun() override;

  int passes() const override;
  void begin_pass(int pass) override;
  bool hold(const ColumnIdentity& column, ColumnWidth width) override;
  void sink(const ChunkInput& chunk) override;
  AggregationResult finalize() override;
  AggregationReport report() const override;

 private:
  // The run of a chunk: by the storage chunk id of any stored column it
  // carries; a chunk of computed columns only (no identity) goes round robin.
  size_t run_for(const ChunkInput& chunk);

  AggregationSpec spec_;
  std::vector<std::unique_ptr<AggregationRun>> runs_;
  std::vector<std::string> names_;
  std::function<void(size_t)> enter_;
  ParallelTasks parallel_;
  size_t next_ = 0;
  uint64_t groups_ = 0, parts_groups_ = 0;  // merged, and the runs' before the merge
  double finalize_ms_ = 0, merge_ms_ = 0;
};

}  // namespace tally
