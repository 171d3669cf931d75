#pragma once
// The arithmetic of the percentile selection (ordered_select.cuh), the same
// on the host and the device: the value buckets, a monotone function of the
// order code, and one key's walk over its histogram that finds the bucket
// and the rank of each position its picks read. The host's tests check both
// against a sort without a GPU.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "common/host_device.hpp"
#include "common/ordered_pick.hpp"
#include "gpu/engine/ordered_row_codes.cuh"

namespace tally::gpu {

// A cont pick reads two positions, the others one.
inline constexpr int kMaxTargets = 2 * kMaxPicks;

TALLY_HD double value_of_float_code(uint64_t code) {
  const uint64_t bits = (code & kSignBit) != 0 ? code & ~kSignBit : ~code;
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
#endif
}

TALLY_HD uint64_t float_code_of(double v) {
#if defined(__CUDA_ARCH__)
  const auto bits = static_cast<uint64_t>(__double_as_longlong(v));
#else
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
#endif
  return (bits & kSignBit) != 0 ? ~bits : bits | kSignBit;
}

// Buckets over codes from lo to hi, linear in the code (integers' values;
// floats roughly by magnitude, a code's high bits being its exponent) or,
// for floats, linear in the value. Codes below lo go to the first bucket,
// above hi (a float's infinities and NaN, outside its finite range) to the
// last.
struct Buckets {
  int count = 1;
  bool by_value = false;
  uint64_t lo = 0, hi = 0;
  int shift = 0;  // by code: (code - lo) >> shift
  double lo_half = 0, scale = 0;  // by value: (value / 2 - lo_half) * scale (halves: no overflow)
};

// `count` buckets linear in the codes from lo to hi.
inline Buckets code_buckets(int count, uint64_t lo, uint64_t hi) {
  Buckets b;
  b.count = count;
  b.lo = lo;
  b.hi = hi;
  while (((b.hi - b.lo) >> b.shift) >= static_cast<uint64_t>(b.count)) ++b.shift;
  return b;
}

// `count` buckets linear in the values of the float codes lo to hi (both
// finite), or nullopt where their span is too narrow to divide.
inline std::optional<Buckets> value_buckets(int count, uint64_t lo, uint64_t hi) {
  Buckets b;
  b.count = count;
  b.by_value = true;
  b.lo = lo;
  b.hi = hi;
  b.lo_half = value_of_float_code(lo) * 0.5;
  const double span = value_of_float_code(hi) * 0.5 - b.lo_half;
  b.scale = span > 0 ? count / span : 0;
  if (!(std::isfinite(b.scale) && b.scale > 0)) return std::nullopt;
  return b;
}

// The bucket of a code, in [0, b.count): never less for a greater code.
TALLY_HD int bucket_of(uint64_t code, const Buckets& b) {
  if (code < b.lo) return 0;
  if (code > b.hi) return b.count - 1;
  if (!b.by_value) return static_cast<int>((code - b.lo) >> b.shift);
  const double t = (value_of_float_code(code) * 0.5 - b.lo_half) * b.scale;
  return t < static_cast<double>(b.count) ? static_cast<int>(t) : b.count - 1;
}

// One key's targets from its histogram `h` of `buckets` counts (n rows in
// all, n > 0): for the j-th position the picks read, its bucket, its rank
// among the key's gathered rows (the rows of its target buckets, in
// order: each bucket holding a position is gathered whole, once) and the
// position itself. Returns how many rows the key gathers.
TALLY_HD uint64_t locate_targets(const unsigned* h, int buckets, uint64_t n, const PickArgs& p, int* bucket, uint64_t* rank,
                                 uint64_t* position) {
  int targets = 0;
  for (int i = 0; i < p.count; ++i) {
    uint64_t two[2];
    const int c = tally::ordered_pick_positions(p.picks[i], n, two);
    for (int j = 0; j < c; ++j) position[targets++] = two[j];
  }
  uint64_t below = 0, gathered = 0;
  int found = 0;
  for (int b = 0; b < buckets && found < targets; ++b) {
    const uint64_t rows = h[b];
    bool target = false;
    for (int j = 0; j < targets; ++j) {
      if (position[j] >= below && position[j] < below + rows) {
        bucket[j] = b;
        rank[j] = gathered + (position[j] - below);
        target = true;
        ++found;
      }
    }
    if (target) gathered += rows;
    below += rows;
  }
  return gathered;
}

}  // namespace tally::gpu
