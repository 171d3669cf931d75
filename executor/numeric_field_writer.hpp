#pragma once
// Numeric and avg fields of a DataRow written in place, in text
// (Numeric::append_to) or binary (numeric_send) form.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "executor/field_writer.hpp"
#include "executor/numeric.hpp"
#include "executor/value.hpp"

namespace tally::executor::row_encoding {

// Numeric fields are written directly while they are in these bounds (every
// avg/sum result is); others go through value_codec.
constexpr int32_t kNumericFastMaxScale = 60;
constexpr size_t kNumericTextBound = 4 + 2 + kNumericFastMaxScale + 1;  // sign, point, digits
constexpr size_t kNumericBinaryBound = 4 + 8 + 2 * 12;                  // header + 12 base-10000 digits
inline const unsigned __int128 kNumericBinaryMaxMagnitude = static_cast<unsigned __int128>(1e34);

// Numeric::append_to's text, written in place; returns the end.
char* write_numeric_text(char* p, const Numeric& n);

// numeric_send: base-10000 digits aligned at the decimal point, leading and
// trailing zero digits stripped (value_codec's append_numeric_binary).
// Length word included; returns the end.
char* write_numeric_binary(char* p, const Numeric& n);

inline bool numeric_fast(FieldCoder coder, const Numeric& n) {
  if (n.scale < 0 || n.scale > kNumericFastMaxScale) return false;
  return coder == FieldCoder::numeric_text || magnitude(n.mantissa) < kNumericBinaryMaxMagnitude;
}

// An avg field out of the direct writers' bounds (never seen for an avg of
// int2/int4: its scale is at most 36 and its magnitude below 10^24), through
// value_codec; returns its bytes, length word included.
std::string avg_field_slow(const Vector& v, const Numeric& avg, bool binary);

// The text of an avg over groups of one or two rows at the scale
// avg_of_int64 chose, without the scaled mantissa: sum / 1 is the sum, and
// sum / 2 is the half of it ending in .5 or .0, exact at any scale >= 1
// (no rounding), followed by zeros. Most groups of a result with nearly as
// many groups as rows have one or two rows; this skips taking apart a
// 20-digit mantissa for each (8M groups over 10M rows).
constexpr int32_t kAvgExactMaxScale = 32;

inline char* write_exact_avg_text(char* p, int64_t sum, int64_t count, int32_t scale) {
  static constexpr char kZeros[kAvgExactMaxScale + 1] = "00000000000000000000000000000000";
  const uint64_t magnitude = sum < 0 ? 0 - static_cast<uint64_t>(sum) : static_cast<uint64_t>(sum);
  if (sum < 0) *p++ = '-';
  p = write_uint(p, count == 1 ? magnitude : magnitude / 2);
  if (scale == 0) return p;
  *p++ = '.';
  std::memcpy(p, kZeros, kAvgExactMaxScale);  // within the field's bound; the bytes past scale are overwritten
  if (count == 2 && (magnitude & 1) != 0) *p = '5';
  return p + scale;
}

}  // namespace tally::executor::row_encoding
