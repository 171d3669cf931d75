#include "executor/estimate/group_count_estimator.hpp"

#include <algorithm>
#include <cmath>

namespace tally::executor::estimate {

namespace {
// Three standard errors: the sketch interval holds with ~99.7 % probability.
constexpr double kSketchSigmas = 3.0;
// Run starts above this share of the sample: the data has no runs to exploit.
constexpr double kRunStartShareToSkip = 0.95;
}  // namespace

GeeBounds gee_bounds(const FrequencyProfile& p, uint64_t population_rows) {
  GeeBounds bounds;
  if (p.sample_rows == 0) return bounds;
  const double scale = static_cast<double>(population_rows) / static_cast<double>(p.sample_rows);
  const double f1 = static_cast<double>(p.singletons());
  const double d = static_cast<double>(p.distinct);
  bounds.lower = d;
  bounds.upper = std::min(std::max(1.0, scale) * f1 + (d - f1),
                          d + std::max(0.0, static_cast<double>(population_rows) - static_cast<double>(p.sample_rows)));
  bounds.upper = std::max(bounds.upper, bounds.lower);
  return bounds;
}

std::string_view source_name(EstimateSource source) {
  switch (source) {
    case EstimateSource::exact: return "exact";
    case EstimateSource::sample: return "sample";
    case EstimateSource::sketch: return "sketch";
    case EstimateSource::sample_sketch: return "sample+sketch";
    case EstimateSource::empty: return "empty";
  }
  return "?";
}

double GroupCountEstimate::error_bound() const {
  if (lower <= 0 || upper <= 0) return 1.0;
  return std::max(1.0, std::sqrt(upper / lower));
}

std::optional<HllSketch> merge_sketches(std::span<const HllSketch> chunk_sketches) {
  if (chunk_sketches.empty()) return std::nullopt;
  HllSketch merged(chunk_sketches.front().precision());
  for (const auto& sketch : chunk_sketches) {
    if (!merged.merge(sketch)) return std::nullopt;
  }
  return merged;
}

GroupCountEstimate estimate_group_count(const EstimateInput& input) {
  FrequencyCounter counter;
  const bool runs_known = input.previous_hashes.size() == input.sample_hashes.size();
  for (size_t i = 0; i < input.sample_hashes.size(); ++i) {
    counter.add(input.sample_hashes[i], !runs_known || input.sample_hashes[i] != input.previous_hashes[i]);
  }
  return estimate_group_count(counter, input, runs_known);
}

GroupCountEstimate estimate_group_count(const FrequencyCounter& sample, const EstimateInput& input,
                                        bool run_starts_known) {
  GroupCountEstimate out;
  out.estimator = input.estimator;
  if (input.total_rows == 0) return out;
  const double n_rows = static_cast<double>(input.total_rows);
  const bool whole_table = sample.rows() >= input.total_rows;

  const FrequencyProfile profile = sample.profile();
  out.sample_rows = profile.sample_rows;
  out.sample_distinct = profile.distinct;
  out.population_rows = n_rows;

  // Sketch bounds on the group count: at least the most distinct column,
  // at most the product of the columns' distinct counts (and N).
  double sketch_lower = 1.0;
  double sketch_upper = n_rows;
  double sketch_point = 0.0;
  const bool have_sketches = !input.key_column_sketches.empty() &&
                             input.key_column_has_nulls.size() == input.key_column_sketches.size();
  if (have_sketches) {
    double product = 1.0;
    for (size_t i = 0; i < input.key_column_sketches.size(); ++i) {
      const HllSketch& sketch = input.key_column_sketches[i];
      const double nulls = input.key_column_has_nulls[i] ? 1.0 : 0.0;
      const double distinct = sketch.estimate() + nulls;
      const double sigma = sketch.relative_standard_error() * kSketchSigmas;
      sketch_lower = std::max(sketch_lower, std::max(1.0, distinct * (1.0 - sigma)));
      product *= std::max(1.0, distinct * (1.0 + sigma));
      sketch_point = std::max(sketch_point, distinct);
    }
    sketch_upper = std::min(sketch_upper, product);
  }

  if (whole_table) {
    out.groups = out.lower = out.upper = static_cast<double>(profile.distinct);
    out.source = EstimateSource::exact;
    return out;
  }
  if (have_sketches && input.key_column_sketches.size() == 1) {
    out.groups = std::clamp(sketch_point, 1.0, n_rows);
    out.lower = std::min(out.groups, sketch_lower);
    out.upper = std::max(out.groups, std::min(n_rows, sketch_upper));
    out.source = EstimateSource::sketch;
    return out;
  }
  if (profile.sample_rows == 0) {
    // Nothing sampled: only the sketches (or the trivial [1, N]) say anything.
    out.lower = sketch_lower;
    out.upper = sketch_upper;
    out.groups = std::sqrt(out.lower * out.upper);
    out.source = have_sketches ? EstimateSource::sample_sketch : EstimateSource::empty;
    return out;
  }

  GeeBounds bounds = gee_bounds(profile, input.total_rows);
  out.groups = estimate_with(input.estimator, profile, input.total_rows);
  // The same on run starts, when the previous rows' keys are known: the
  // sample's run starts are a uniform sample of the table's run starts, whose
  // count is estimated from their share of the sample. On clustered data the
  // row-level estimate overestimates (no repeats in the sample) and the
  // run-level one does not; on data without runs both see the same sample;
  // with very few runs the run-level sample is tiny and overestimates. Both
  // err upward, so the smaller estimate and the tighter bounds are kept.
  // When nearly every sampled row starts a run, the run-start sample is the
  // row sample (estimates within a few percent): skip the second profile.
  const bool clustered = static_cast<double>(sample.run_starts()) < kRunStartShareToSkip * static_cast<double>(sample.rows());
  if (run_starts_known && sample.run_starts() > 0 && clustered) {
    const double share = static_cast<double>(sample.run_starts()) / static_cast<double>(sample.rows());
    const auto runs = std::max<uint64_t>(sample.run_starts(), static_cast<uint64_t>(std::llround(share * n_rows)));
    const FrequencyProfile run_profile = sample.run_start_profile();
    const GeeBounds run_bounds = gee_bounds(run_profile, runs);
    const double run_estimate = estimate_with(input.estimator, run_profile, runs);
    if (run_estimate < out.groups) {
      out.groups = run_estimate;
      out.population_rows = static_cast<double>(runs);
    }
    bounds.upper = std::max(bounds.lower, std::min(bounds.upper, run_bounds.upper));
  }
  out.lower = bounds.lower;
  out.upper = bounds.upper;
  out.source = EstimateSource::sample;
  if (have_sketches) {
    out.lower = std::max(out.lower, std::min(sketch_lower, out.upper));
    out.upper = std::max(out.lower, std::min(out.upper, sketch_upper));
    out.groups = std::clamp(out.groups, out.lower, out.upper);
    out.source = EstimateSource::sample_sketch;
  }
  out.groups = std::clamp(out.groups, out.lower, out.upper);
  return out;
}

}  // namespace tally::executor::estimate
