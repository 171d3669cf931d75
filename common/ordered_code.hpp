#pragma once
// Order codes of the values an engine sorts for ordered-set aggregates and
// count(DISTINCT) (PartialOp::ordered_values, count_distinct): an unsigned
// 64-bit code per value whose unsigned order is PostgreSQL's order of the
// values and whose equality is PostgreSQL's equality. So one radix or
// comparison sort of codes, on any engine, sorts every input type, and the
// value comes back from its code.
//  * integer-like (int2/4/8, date, timestamp, numeric scaled to int64,
//    bool): the sign bit flipped;
//  * float: IEEE bits made monotonic, with every NaN one code above
//    +Infinity (PostgreSQL sorts NaN greatest and takes all NaNs as equal).
//    -0 keeps its own code, just below 0's, so that percentile_disc can
//    return it as PostgreSQL does; -0 = 0 to PostgreSQL, so code equality
//    is value equality except for these two (same_order_value).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "common/host_device.hpp"

namespace tally {

constexpr uint64_t kOrderSignBit = uint64_t{1} << 63;

inline uint64_t order_code_of_int(int64_t v) { return static_cast<uint64_t>(v) ^ kOrderSignBit; }
inline int64_t int_of_order_code(uint64_t code) { return static_cast<int64_t>(code ^ kOrderSignBit); }

inline uint64_t order_code_of_float(double v) {
  if (std::isnan(v)) v = std::numeric_limits<double>::quiet_NaN();  // one NaN, sign bit clear
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return (bits & kOrderSignBit) != 0 ? ~bits : bits | kOrderSignBit;
}

inline double float_of_order_code(uint64_t code) {
  const uint64_t bits = (code & kOrderSignBit) != 0 ? code & ~kOrderSignBit : ~code;
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// The codes of -0 and 0: the one pair of distinct float codes that are one
// value (NaN has one code, and every other value its own).
constexpr uint64_t kOrderCodeOfMinusZero = ~kOrderSignBit;
constexpr uint64_t kOrderCodeOfZero = kOrderSignBit;

// Whether two codes are one value to PostgreSQL (-0 = 0 for floats). On the
// device too: the GPU counts distinct values with the same test.
TALLY_HD bool same_order_value(uint64_t a, uint64_t b, bool floats) {
  return a == b || (floats && ((a == kOrderCodeOfMinusZero && b == kOrderCodeOfZero) ||
                               (a == kOrderCodeOfZero && b == kOrderCodeOfMinusZero)));
}

}  // namespace tally
