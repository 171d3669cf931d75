#pragma once
// HllSketch: a HyperLogLog distinct-count sketch (Flajolet et al. 2007, with
// the small-range linear-counting correction of Heule et al. 2013). Storage
// keeps one per chunk column (non-NULL values only); the estimator merges the
// chunks' sketches of a key column to bound the group count.
//
// Register format (what storage persists, see serialize()):
//   byte 0      format version (kHllFormatVersion = 1)
//   byte 1      precision p, kHllMinPrecision <= p <= kHllMaxPrecision
//   bytes 2..   2^p registers, one uint8 each: register j holds the maximum,
//               over the values v whose hash h = hll_hash(v) has top p bits
//               equal to j, of rho = 1 + number of leading zeros of (h << p)
//               (capped at 64 - p + 1); 0 = no value seen.
// Values are hashed with hll_hash() on their 64-bit storage bits (int2/4/8,
// date, timestamp, numeric scaled int64 sign-extended; float8 bits with -0.0
// normalized to 0.0; text: the dictionary code). Sketches of one column merge
// by register-wise max only if built with the same precision.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/hll_hash.hpp"

namespace tally::executor::estimate {

inline constexpr uint8_t kHllFormatVersion = tally::kHllFormatVersion;
inline constexpr int kHllMinPrecision = 4;
inline constexpr int kHllMaxPrecision = 16;
// 2^12 registers = 4 KiB per chunk column, standard error 1.04/64 = 1.6 %.
inline constexpr int kHllDefaultPrecision = 12;

// The hash shared with storage's per-chunk sketches (common/hll_hash.hpp).
using tally::hll_hash;

class HllSketch {
 public:
  explicit HllSketch(int precision = kHllDefaultPrecision);

  int precision() const { return precision_; }
  size_t register_count() const { return registers_.size(); }
  const std::vector<uint8_t>& registers() const { return registers_; }

  // Adds a value already hashed with hll_hash (or any uniform 64-bit hash).
  void add_hash(uint64_t hash);
  void add_value_bits(uint64_t bits) { add_hash(hll_hash(bits)); }
  // Register-wise max; returns false (and changes nothing) on a precision mismatch.
  bool merge(const HllSketch& other);
  bool empty() const;

  // Estimated number of distinct values added.
  double estimate() const;
  // Relative standard error of estimate(): 1.04 / sqrt(2^p).
  double relative_standard_error() const;

  std::vector<uint8_t> serialize() const;
  // nullopt on a wrong version, precision, length or register value.
  static std::optional<HllSketch> deserialize(std::span<const uint8_t> bytes);

 private:
  int precision_;
  std::vector<uint8_t> registers_;
};

}  // namespace tally::executor::estimate
