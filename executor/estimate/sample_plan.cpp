#include "executor/estimate/sample_plan.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "executor/estimate/group_count_estimator.hpp"
#include "executor/estimate/hll_sketch.hpp"

namespace tally::executor::estimate {

namespace {
uint64_t reverse_bits(uint64_t value, int bits) {
  uint64_t out = 0;
  for (int i = 0; i < bits; ++i) {
    out = (out << 1) | (value & 1);
    value >>= 1;
  }
  return out;
}
}  // namespace

SamplePlan::SamplePlan(uint64_t total_rows, const SamplePolicy& policy)
    : total_rows_(total_rows), policy_(policy) {
  const auto fraction_cap = static_cast<uint64_t>(policy.max_fraction * static_cast<double>(total_rows));
  const uint64_t cap = std::max(fraction_cap, policy.min_cap_rows);
  if (cap >= total_rows) {
    strata_ = total_rows;  // sample everything: exact
    return;
  }
  strata_ = std::bit_floor(cap);
  strata_bits_ = std::countr_zero(strata_);
}

uint64_t SamplePlan::position_of_stratum(uint64_t stratum) const {
  if (whole_table()) return stratum;
  // Stratum j covers rows [j N / S, (j+1) N / S); 128-bit products avoid overflow.
  const auto begin = static_cast<uint64_t>((static_cast<unsigned __int128>(stratum) * total_rows_) / strata_);
  const auto end = static_cast<uint64_t>((static_cast<unsigned __int128>(stratum + 1) * total_rows_) / strata_);
  const uint64_t width = end - begin;
  return begin + (width <= 1 ? 0 : hll_hash(stratum ^ policy_.seed) % width);
}

std::vector<uint64_t> SamplePlan::next_round() {
  std::vector<uint64_t> positions;
  if (exhausted()) return positions;
  const uint64_t round = next_ == 0 ? std::min(policy_.first_round_rows, strata_) : std::min(next_, strata_ - next_);
  positions.reserve(round);
  for (uint64_t i = next_; i < next_ + round; ++i) {
    positions.push_back(position_of_stratum(whole_table() ? i : reverse_bits(i, strata_bits_)));
  }
  next_ += round;
  std::sort(positions.begin(), positions.end());
  return positions;
}

bool should_grow(const SamplePlan& plan, const FrequencyProfile& profile, const SamplePolicy& policy) {
  if (plan.exhausted()) return false;
  const GeeBounds bounds = gee_bounds(profile, plan.total_rows());
  return bounds.error_bound() > policy.target_error_bound;
}

}  // namespace tally::executor::estimate
