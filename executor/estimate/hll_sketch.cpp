#include "executor/estimate/hll_sketch.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>

namespace tally::executor::estimate {

HllSketch::HllSketch(int precision) : precision_(precision) {
  if (precision < kHllMinPrecision || precision > kHllMaxPrecision) {
    throw std::invalid_argument("HllSketch precision out of range");
  }
  registers_.assign(size_t{1} << precision, 0);
}

void HllSketch::add_hash(uint64_t hash) {
  const uint64_t index = hash >> (64 - precision_);
  const uint64_t rest = hash << precision_;
  const int max_rank = 64 - precision_ + 1;
  const int rank = rest == 0 ? max_rank : std::min(std::countl_zero(rest) + 1, max_rank);
  uint8_t& reg = registers_[index];
  if (rank > reg) reg = static_cast<uint8_t>(rank);
}

bool HllSketch::merge(const HllSketch& other) {
  if (other.precision_ != precision_) return false;
  for (size_t i = 0; i < registers_.size(); ++i) {
    if (other.registers_[i] > registers_[i]) registers_[i] = other.registers_[i];
  }
  return true;
}

bool HllSketch::empty() const {
  for (uint8_t r : registers_) {
    if (r != 0) return false;
  }
  return true;
}

double HllSketch::estimate() const {
  const double m = static_cast<double>(registers_.size());
  double sum = 0.0;
  size_t zeros = 0;
  for (uint8_t r : registers_) {
    sum += std::ldexp(1.0, -static_cast<int>(r));
    if (r == 0) ++zeros;
  }
  const double alpha = m == 16 ? 0.673 : m == 32 ? 0.697 : m == 64 ? 0.709 : 0.7213 / (1.0 + 1.079 / m);
  const double raw = alpha * m * m / sum;
  // Linear counting is far more accurate while many registers are empty
  // (Heule et al.: use it below 2.5 m, and whenever it is available there).
  if (zeros > 0) {
    const double linear = m * std::log(m / static_cast<double>(zeros));
    if (linear <= 2.5 * m || raw <= 2.5 * m) return linear;
  }
  return raw;  // 64-bit hashes: no large-range correction needed.
}

double HllSketch::relative_standard_error() const {
  return 1.04 / std::sqrt(static_cast<double>(registers_.size()));
}

std::vector<uint8_t> HllSketch::serialize() const {
  std::vector<uint8_t> out;
  out.reserve(2 + registers_.size());
  out.push_back(kHllFormatVersion);
  out.push_back(static_cast<uint8_t>(precision_));
  out.insert(out.end(), registers_.begin(), registers_.end());
  return out;
}

std::optional<HllSketch> HllSketch::deserialize(std::span<const uint8_t> bytes) {
  if (bytes.size() < 2 || bytes[0] != kHllFormatVersion) return std::nullopt;
  const int precision = bytes[1];
  if (precision < kHllMinPrecision || precision > kHllMaxPrecision) return std::nullopt;
  if (bytes.size() != 2 + (size_t{1} << precision)) return std::nullopt;
  HllSketch sketch(precision);
  const int max_rank = 64 - precision + 1;
  for (size_t i = 0; i < sketch.registers_.size(); ++i) {
    if (bytes[2 + i] > max_rank) return std::nullopt;
    sketch.registers_[i] = bytes[2 + i];
  }
  return sketch;
}

}  // namespace tally::executor::estimate
