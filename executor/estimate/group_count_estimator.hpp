#pragma once
// Group-count estimation for GROUP BY: the number of distinct keys of N rows,
// from the 64-bit hashes of a sample of the keys (single column, several
// columns or expressions: the executor hashes whatever the key is) and,
// when available, the merged HyperLogLog sketches of the key's columns.
// Pure functions, no I/O. The result sizes the hash table and selects the
// starting variant and the tuning-cache bucket.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "executor/estimate/distinct_estimators.hpp"
#include "executor/estimate/frequency_profile.hpp"
#include "executor/estimate/hll_sketch.hpp"

namespace tally::executor::estimate {

// The GEE interval (Charikar et al.): D lies in [d, (N/n) f1 + sum_{i>=2} f_i]
// for every population consistent with the sample (lower) and with high
// probability (upper); GEE is its geometric mean.
struct GeeBounds {
  double lower = 0;
  double upper = 0;
  double error_bound() const { return lower > 0 ? std::max(1.0, std::sqrt(upper / lower)) : 1.0; }
};
GeeBounds gee_bounds(const FrequencyProfile& profile, uint64_t population_rows);

enum class EstimateSource {
  exact,          // the sample was the whole table
  sample,         // a sampling estimator alone
  sketch,         // merged HLL of a single key column
  sample_sketch,  // sampling estimate clamped by the key columns' sketches
  empty,          // no rows
};
std::string_view source_name(EstimateSource source);

struct GroupCountEstimate {
  double groups = 0;     // point estimate
  double lower = 0;      // confidence interval for the true group count
  double upper = 0;
  EstimateSource source = EstimateSource::empty;
  Estimator estimator = Estimator::hybrid;
  uint64_t sample_rows = 0;      // rows the estimate used (run starts when known)
  uint64_t sample_distinct = 0;
  double population_rows = 0;    // N, or the estimated number of run starts
  // Worst-case ratio error the interval allows: sqrt(upper / lower) >= 1.
  double error_bound() const;
};

struct EstimateInput {
  std::span<const uint64_t> sample_hashes;  // one per sampled row (NULL keys hashed too)
  uint64_t total_rows = 0;                  // N
  // Optional, same length as sample_hashes: the key hash of the row just
  // before each sampled row (pass any other value, e.g. ~hash, where there is
  // none, such as a chunk's first row). Lets the estimator work on run starts
  // (rows whose key differs from the previous row's): every group has one,
  // and on sorted or clustered data they are far fewer than N, which makes
  // the estimate exact where a row sample alone cannot tell.
  std::span<const uint64_t> previous_hashes = {};
  // Optional: one sketch per key column, each merged over all chunks (empty
  // span when the key has an expression or the sketches are missing).
  std::span<const HllSketch> key_column_sketches = {};
  // Per key column, whether it has NULLs (a NULL key is one more group).
  // Only read when sketches are given; its size must match them (a bool
  // array: std::vector<bool> cannot back a span).
  std::span<const bool> key_column_has_nulls = {};
  Estimator estimator = Estimator::hybrid;
};

GroupCountEstimate estimate_group_count(const EstimateInput& input);

// The same from a counter the sampler filled incrementally (input's
// sample_hashes and previous_hashes are ignored; run starts are used when
// run_starts_known, i.e. the previous row's key was checked for every row).
GroupCountEstimate estimate_group_count(const FrequencyCounter& sample, const EstimateInput& input,
                                        bool run_starts_known);

// Merges per-chunk sketches of one column; nullopt when there are none or
// their precisions differ (the caller then estimates from the sample alone).
std::optional<HllSketch> merge_sketches(std::span<const HllSketch> chunk_sketches);

}  // namespace tally::executor::estimate
