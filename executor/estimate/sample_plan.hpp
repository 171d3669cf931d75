#pragma once
// SamplePlan: which rows to sample for group-count estimation. The table is
// cut into 2^k equal strata and one row is drawn at a random offset inside
// each, so the sample is spread over every chunk and has no aliasing with
// periodic keys. Strata are taken in bit-reversed order, so every round (a
// prefix of that order) is itself spread evenly over the table: the executor
// can sample a small round first and add rounds only while the estimate is
// uncertain (should_grow), never re-reading a row.
#include <cstdint>
#include <vector>

#include "executor/estimate/group_count_estimator.hpp"

namespace tally::executor::estimate {

struct SamplePolicy {
  // First round; below this a sample says little about f1.
  uint64_t first_round_rows = uint64_t{1} << 14;
  // Share of the table a sample may reach on large tables: at 10^8 rows 2^20
  // rows (1 %) is a few percent of a CPU hash aggregation (bench/estimate).
  double max_fraction = 0.01;
  // Small tables may be sampled up to this many rows (cheap in absolute terms).
  uint64_t min_cap_rows = uint64_t{1} << 17;
  // Stop growing once the GEE bound sqrt(upper/lower) is below this ratio.
  double target_error_bound = 1.25;
  // ... or once doubling the sample changed the estimate by less than this
  // factor, with at least max(min_stable_rows, min_stable_share x the plan's
  // capacity) sampled: the estimators' bias shrinks with the sample, so an
  // estimate that no longer moves has converged (on large tables a sample
  // far below the cap moves too little to tell).
  double stable_ratio = 1.1;
  uint64_t min_stable_rows = uint64_t{1} << 16;
  double min_stable_share = 0.5;
  uint64_t seed = 0x7A11Bu;
};

class SamplePlan {
 public:
  SamplePlan(uint64_t total_rows, const SamplePolicy& policy = {});

  uint64_t total_rows() const { return total_rows_; }
  // Strata in the full plan (a power of two; when whole_table(), strata
  // beyond the last row are skipped).
  uint64_t capacity() const { return strata_; }
  uint64_t sampled() const { return next_; }
  bool exhausted() const { return next_ >= strata_; }
  // True when the plan's strata are single rows: exhausting it reads every row.
  bool whole_table() const { return whole_table_; }

  // Row positions of the next round, sorted ascending (the first round has
  // policy.first_round_rows strata, each later one doubles the sample).
  std::vector<uint64_t> next_round();

  // Whether to take another round after `estimate` (from everything sampled
  // so far): false when the plan is exhausted, the error bound meets the
  // target, or the estimate is stable across the last doubling.
  bool should_grow(const GroupCountEstimate& estimate);

 private:
  uint64_t position_of_stratum(uint64_t stratum) const;

  uint64_t total_rows_;
  SamplePolicy policy_;
  uint64_t strata_ = 0;
  int strata_bits_ = 0;
  uint64_t next_ = 0;
  bool whole_table_ = false;
  double previous_estimate_ = 0;
};

// The stateless part of SamplePlan::should_grow: false when the plan is
// exhausted or the estimate's error bound already meets the target.
bool should_grow(const SamplePlan& plan, const GroupCountEstimate& estimate, const SamplePolicy& policy = {});

}  // namespace tally::executor::estimate
