#include "executor/estimate/group_count_estimator.hpp"

#include <algorithm>
#include <cmath>

namespace tally::executor::estimate {

namespace {
// Three standard errors: the sketch interval holds with ~99.7 % probability.
constexpr double kSketchSigmas = 3.0;
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
  GroupCountEstimate out;
  out.estimator = input.estimator;
  if (input.total_rows == 0) return out;
  const FrequencyProfile profile = profile_from_hashes(input.sample_hashes);
  out.sample_rows = profile.sample_rows;
  out.sample_distinct = profile.distinct;
  const double n_rows = static_cast<double>(input.total_rows);

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

  if (profile.sample_rows >= input.total_rows && profile.sample_rows > 0) {
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

  const GeeBounds bounds = gee_bounds(profile, input.total_rows);
  out.groups = estimate_with(input.estimator, profile, input.total_rows);
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
