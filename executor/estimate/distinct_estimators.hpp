#pragma once
// Sampling estimators of the number of distinct values D in a population of
// N rows from the frequency profile of a uniform sample of n rows (q = n/N).
// Each has a known error behaviour; all return a value in [d, N].
//  - gee:       Guaranteed-Error Estimator (Charikar et al., PODS 2000),
//               sqrt(N/n) f1 + sum_{i>=2} f_i; ratio error <= sqrt(N/n) w.h.p.
//               for every input, the best possible worst case.
//  - chao_lee:  coverage estimator (Chao & Lee 1992): d/C + n(1-C)/C * g^2,
//               C = 1 - f1/n, g^2 = squared coefficient of variation of the
//               class sizes; good for low to moderate skew.
//  - shlosser:  Shlosser (1981): d + f1 sum (1-q)^i f_i / sum i q (1-q)^(i-1) f_i;
//               assumes Bernoulli sampling; accurate for high skew.
//  - jackknife: first-order smoothed jackknife Duj1 (Haas et al., VLDB 1995),
//               d / (1 - (1-q) f1 / n); accurate for low skew (near uniform).
//  - hybrid:    Haas et al.'s hybrid: a chi-square test of the sample's class
//               sizes for uniformity picks jackknife (uniform) or Shlosser (skewed).
#include <cstdint>
#include <string_view>

#include "executor/estimate/frequency_profile.hpp"

namespace tally::executor::estimate {

enum class Estimator { gee, chao_lee, shlosser, jackknife, hybrid };

std::string_view estimator_name(Estimator estimator);

double estimate_gee(const FrequencyProfile& profile, uint64_t population_rows);
double estimate_chao_lee(const FrequencyProfile& profile, uint64_t population_rows);
double estimate_shlosser(const FrequencyProfile& profile, uint64_t population_rows);
double estimate_jackknife(const FrequencyProfile& profile, uint64_t population_rows);
double estimate_hybrid(const FrequencyProfile& profile, uint64_t population_rows);
double estimate_with(Estimator estimator, const FrequencyProfile& profile, uint64_t population_rows);

// True when the chi-square test does not reject "all classes equally likely"
// at the 97.5 % level (the switch of the hybrid estimator).
bool looks_uniform(const FrequencyProfile& profile);

}  // namespace tally::executor::estimate
