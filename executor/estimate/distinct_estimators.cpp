#include "executor/estimate/distinct_estimators.hpp"

#include <algorithm>
#include <cmath>

namespace tally::executor::estimate {

namespace {

// Every estimate lies between what was seen and the population size; a sample
// of the whole population is exact.
double clamp_estimate(double value, const FrequencyProfile& p, uint64_t population_rows) {
  const double d = static_cast<double>(p.distinct);
  const double unseen_rows = static_cast<double>(population_rows) - static_cast<double>(p.sample_rows);
  const double upper = d + std::max(0.0, unseen_rows);
  if (!std::isfinite(value)) return upper;
  return std::clamp(value, d, std::max(d, upper));
}

double sampling_fraction(const FrequencyProfile& p, uint64_t population_rows) {
  if (population_rows == 0) return 1.0;
  return std::min(1.0, static_cast<double>(p.sample_rows) / static_cast<double>(population_rows));
}

}  // namespace

std::string_view estimator_name(Estimator estimator) {
  switch (estimator) {
    case Estimator::gee: return "gee";
    case Estimator::chao_lee: return "chao_lee";
    case Estimator::shlosser: return "shlosser";
    case Estimator::jackknife: return "jackknife";
    case Estimator::hybrid: return "hybrid";
  }
  return "?";
}

double estimate_gee(const FrequencyProfile& p, uint64_t population_rows) {
  if (p.sample_rows == 0) return 0.0;
  const double q = sampling_fraction(p, population_rows);
  const double f1 = static_cast<double>(p.singletons());
  const double rest = static_cast<double>(p.distinct) - f1;
  return clamp_estimate(std::sqrt(1.0 / q) * f1 + rest, p, population_rows);
}

double estimate_chao_lee(const FrequencyProfile& p, uint64_t population_rows) {
  if (p.sample_rows == 0) return 0.0;
  const double n = static_cast<double>(p.sample_rows);
  const double d = static_cast<double>(p.distinct);
  const double coverage = 1.0 - static_cast<double>(p.singletons()) / n;
  if (coverage <= 0.0) return clamp_estimate(INFINITY, p, population_rows);
  double pairs = 0.0;  // sum i (i-1) f_i
  for (size_t i = 2; i < p.f.size(); ++i) {
    pairs += static_cast<double>(i) * static_cast<double>(i - 1) * static_cast<double>(p.f[i]);
  }
  const double base = d / coverage;
  const double gamma2 = n > 1 ? std::max(0.0, base * pairs / (n * (n - 1)) - 1.0) : 0.0;
  return clamp_estimate(base + n * (1.0 - coverage) / coverage * gamma2, p, population_rows);
}

double estimate_shlosser(const FrequencyProfile& p, uint64_t population_rows) {
  if (p.sample_rows == 0) return 0.0;
  const double q = sampling_fraction(p, population_rows);
  if (q >= 1.0) return static_cast<double>(p.distinct);
  double numerator = 0.0;
  double denominator = 0.0;
  double power = 1.0;  // (1-q)^(i-1)
  for (size_t i = 1; i < p.f.size(); ++i) {
    const double fi = static_cast<double>(p.f[i]);
    numerator += power * (1.0 - q) * fi;
    denominator += static_cast<double>(i) * q * power * fi;
    power *= (1.0 - q);
  }
  if (denominator <= 0.0) return clamp_estimate(INFINITY, p, population_rows);
  const double f1 = static_cast<double>(p.singletons());
  return clamp_estimate(static_cast<double>(p.distinct) + f1 * numerator / denominator, p, population_rows);
}

double estimate_jackknife(const FrequencyProfile& p, uint64_t population_rows) {
  if (p.sample_rows == 0) return 0.0;
  const double q = sampling_fraction(p, population_rows);
  const double n = static_cast<double>(p.sample_rows);
  const double denominator = 1.0 - (1.0 - q) * static_cast<double>(p.singletons()) / n;
  if (denominator <= 0.0) return clamp_estimate(INFINITY, p, population_rows);
  return clamp_estimate(static_cast<double>(p.distinct) / denominator, p, population_rows);
}

bool looks_uniform(const FrequencyProfile& p) {
  if (p.distinct <= 1) return true;
  const double d = static_cast<double>(p.distinct);
  const double expected = static_cast<double>(p.sample_rows) / d;
  double chi2 = 0.0;
  for (size_t i = 1; i < p.f.size(); ++i) {
    const double diff = static_cast<double>(i) - expected;
    chi2 += static_cast<double>(p.f[i]) * diff * diff / expected;
  }
  // 97.5 % quantile of chi-square with k = d-1 degrees of freedom, by the
  // Wilson-Hilferty approximation (accurate to a few percent for k >= 3).
  const double k = d - 1.0;
  const double z = 1.959964;
  const double t = 1.0 - 2.0 / (9.0 * k) + z * std::sqrt(2.0 / (9.0 * k));
  return chi2 <= k * t * t * t;
}

double estimate_hybrid(const FrequencyProfile& p, uint64_t population_rows) {
  return looks_uniform(p) ? estimate_jackknife(p, population_rows) : estimate_shlosser(p, population_rows);
}

double estimate_with(Estimator estimator, const FrequencyProfile& p, uint64_t population_rows) {
  switch (estimator) {
    case Estimator::gee: return estimate_gee(p, population_rows);
    case Estimator::chao_lee: return estimate_chao_lee(p, population_rows);
    case Estimator::shlosser: return estimate_shlosser(p, population_rows);
    case Estimator::jackknife: return estimate_jackknife(p, population_rows);
    case Estimator::hybrid: return estimate_hybrid(p, population_rows);
  }
  return 0.0;
}

}  // namespace tally::executor::estimate
