#include "executor/estimate/sample_plan.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

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
// A bijection of [0, 2^bits) that looks random: odd multipliers and
// xor-shifts are each invertible modulo 2^bits. Used for small tables, where
// strata are single rows and bit reversal alone would take every 8th row
// first (aliasing with periodic keys).
uint64_t scramble(uint64_t value, int bits, uint64_t seed) {
  if (bits == 0) return 0;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const int shift = std::max(1, bits / 2);
  value = (value ^ seed) & mask;
  for (int round = 0; round < 3; ++round) {
    value = (value * 0x9E3779B97F4A7C15ull) & mask;
    value ^= value >> shift;
    value = (value * 0xD6E8FEB86659FD93ull + (seed | 1)) & mask;
  }
  return value;
}
}  // namespace

SamplePlan::SamplePlan(uint64_t total_rows, const SamplePolicy& policy)
    : total_rows_(total_rows), policy_(policy) {
  const auto fraction_cap = static_cast<uint64_t>(policy.max_fraction * static_cast<double>(total_rows));
  const uint64_t cap = std::max(fraction_cap, policy.min_cap_rows);
  if (cap >= total_rows) {
    // Small table: one row per stratum, still visited in bit-reversed order so
    // that an early stop leaves a sample spread over the whole table.
    strata_ = std::bit_ceil(std::max<uint64_t>(total_rows, 1));
    whole_table_ = true;
  } else {
    strata_ = std::bit_floor(cap);
  }
  strata_bits_ = std::countr_zero(strata_);
}

uint64_t SamplePlan::position_of_stratum(uint64_t stratum) const {
  if (whole_table_) return stratum;  // may be >= total_rows: skipped by next_round
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
    const uint64_t stratum = whole_table_ ? scramble(i, strata_bits_, policy_.seed) : reverse_bits(i, strata_bits_);
    const uint64_t position = position_of_stratum(stratum);
    if (position < total_rows_) positions.push_back(position);
  }
  next_ += round;
  std::sort(positions.begin(), positions.end());
  return positions;
}

bool should_grow(const SamplePlan& plan, const GroupCountEstimate& estimate, const SamplePolicy& policy) {
  if (plan.exhausted()) return false;
  return estimate.error_bound() > policy.target_error_bound;
}

bool SamplePlan::should_grow(const GroupCountEstimate& estimate) {
  if (!estimate::should_grow(*this, estimate, policy_)) return false;
  const double previous = previous_estimate_;
  previous_estimate_ = estimate.groups;
  const auto min_rows = std::max(policy_.min_stable_rows,
                                 static_cast<uint64_t>(policy_.min_stable_share * static_cast<double>(strata_)));
  if (next_ < min_rows || previous <= 0 || estimate.groups <= 0) return true;
  const double change = std::max(previous / estimate.groups, estimate.groups / previous);
  return change > policy_.stable_ratio;
}

}  // namespace tally::executor::estimate
