#include "executor/numeric_field_writer.hpp"

#include <charconv>

#include "executor/value_codec.hpp"

namespace tally::executor::row_encoding {

namespace {

// The text of v / 10^scale with exactly `scale` fraction digits, for
// 0 <= scale <= 20. The 20 digits of v come from three independent 4/8-digit
// conversions (a loop of divisions by 100 is a 10-step dependency chain, and
// large avg results write millions of 20-digit values), and are copied out in fixed 24-byte moves: the bytes written past the
// field's end stay inside its reserved bound (integer part <= 20 digits,
// '.', then 24 bytes: 46 of kNumericTextBound's 63) and are overwritten by
// what follows or cut when the buffer is trimmed.
inline char* write_scaled_uint(char* p, uint64_t v, int scale) {
  constexpr uint64_t kT8 = 100000000ULL, kT16 = kT8 * kT8;
  // avg of integers is at scale 16 (|avg| >= 1) or 20 (|avg| < 1): their
  // fraction digits are whole 4/8-digit conversions written in place, with
  // constant divisors (no staging buffer: the two unaligned 24-byte reloads
  // of freshly stored bytes below would stall on store forwarding).
  if (scale == 16) {
    const uint64_t frac = v % kT16;
    p = write_uint(p, v / kT16);
    *p++ = '.';
    write8(p, static_cast<uint32_t>(frac / kT8));
    write8(p + 8, static_cast<uint32_t>(frac % kT8));
    return p + 16;
  }
  if (scale == 20) {  // v < 2^64 < 10^20: "0." and 20 digits
    const uint64_t rest = v % kT16;
    std::memcpy(p, "0.", 2);
    write4(p + 2, static_cast<uint32_t>(v / kT16));
    write8(p + 6, static_cast<uint32_t>(rest / kT8));
    write8(p + 14, static_cast<uint32_t>(rest % kT8));
    return p + 22;
  }
  // d[4, 24): v zero-padded to 20 digits; zeros before (the "0" of 0.xxx at
  // scale 20) and after (what the fixed moves read past the digits).
  char d[52];
  constexpr uint64_t kTen8 = 100000000ULL, kTen16 = kTen8 * kTen8;
  const uint64_t rest = v % kTen16;
  std::memset(d, '0', 4);
  write4(d + 4, static_cast<uint32_t>(v / kTen16));  // <= 1844
  write8(d + 8, static_cast<uint32_t>(rest / kTen8));
  write8(d + 16, static_cast<uint32_t>(rest % kTen8));
  std::memset(d + 24, '0', 28);
  const int n = decimal_digits(v);
  const int int_digits = n > scale ? n - scale : 1;  // "0" when v < 10^scale
  std::memcpy(p, d + 24 - scale - int_digits, 24);
  p += int_digits;
  if (scale == 0) return p;
  *p++ = '.';
  std::memcpy(p, d + 24 - scale, 24);
  return p + scale;
}

}  // namespace

// Numeric::append_to's text, written in place.
char* write_numeric_text(char* p, const Numeric& n) {
  if (n.is_infinite()) {
    const char* text = n.mantissa < 0 ? "-Infinity" : "Infinity";
    const size_t len = std::strlen(text);
    std::memcpy(p, text, len);
    return p + len;
  }
  const unsigned __int128 m = magnitude(n.mantissa);
  if (m <= UINT64_MAX && n.scale <= 20) {
    if (n.mantissa < 0) *p++ = '-';
    return write_scaled_uint(p, static_cast<uint64_t>(m), n.scale);
  }
  char digits[48];  // big-endian decimal digits of the magnitude
  int count;
  if (m <= UINT64_MAX) {
    count = static_cast<int>(write_uint(digits, static_cast<uint64_t>(m)) - digits);
  } else {
    // Above 64 bits: the high part, then the low 19 digits zero-padded.
    constexpr uint64_t kTen19 = 10000000000000000000ULL;
    const unsigned __int128 high = m / kTen19;
    const auto low = static_cast<uint64_t>(m % kTen19);
    char* q = high > UINT64_MAX ? std::to_chars(digits, digits + 20, static_cast<uint64_t>(high / kTen19)).ptr : digits;
    if (high > UINT64_MAX) {
      char block[20];
      const auto mid = static_cast<uint64_t>(high % kTen19);
      const int len = static_cast<int>(std::to_chars(block, block + 20, mid).ptr - block);
      std::memset(q, '0', static_cast<size_t>(19 - len));
      std::memcpy(q + 19 - len, block, static_cast<size_t>(len));
      q += 19;
    } else {
      q = std::to_chars(digits, digits + 20, static_cast<uint64_t>(high)).ptr;
    }
    char block[20];
    const int len = static_cast<int>(std::to_chars(block, block + 20, low).ptr - block);
    std::memset(q, '0', static_cast<size_t>(19 - len));
    std::memcpy(q + 19 - len, block, static_cast<size_t>(len));
    count = static_cast<int>(q + 19 - digits);
  }
  const int scale = n.scale;
  if (n.mantissa < 0) *p++ = '-';
  if (count <= scale) {  // 0.000ddd: at least one integer digit
    *p++ = '0';
    *p++ = '.';
    std::memset(p, '0', static_cast<size_t>(scale - count));
    p += scale - count;
    std::memcpy(p, digits, static_cast<size_t>(count));
    return p + count;
  }
  std::memcpy(p, digits, static_cast<size_t>(count - scale));
  p += count - scale;
  if (scale > 0) {
    *p++ = '.';
    std::memcpy(p, digits + count - scale, static_cast<size_t>(scale));
    p += scale;
  }
  return p;
}

// numeric_send: base-10000 digits aligned at the decimal point, leading and
// trailing zero digits stripped (value_codec's append_numeric_binary).
char* write_numeric_binary(char* p, const Numeric& n) {
  if (n.is_infinite()) {  // NUMERIC_PINF / NUMERIC_NINF: no digits
    p = put_be32(p, 8);
    p = put_be16(p, 0);
    p = put_be16(p, 0);
    p = put_be16(p, n.mantissa < 0 ? 0xF000 : 0xD000);
    return put_be16(p, 0);
  }
  const int scale = n.scale;
  const int pad = (4 - scale % 4) % 4;  // fraction padded to whole base-10000 digits
  unsigned __int128 m = magnitude(n.mantissa);
  for (int i = 0; i < pad; ++i) m *= 10;
  uint16_t groups[16];  // little-endian
  int count = 0;
  while (m > UINT64_MAX) {
    groups[count++] = static_cast<uint16_t>(m % 10000);
    m /= 10000;
  }
  for (auto low = static_cast<uint64_t>(m); low != 0; low /= 10000) groups[count++] = static_cast<uint16_t>(low % 10000);
  int first = 0;  // least significant kept digit
  while (first < count && groups[first] == 0) ++first;
  const int ndigits = count - first;
  const int weight = ndigits == 0 ? 0 : -(scale + pad) / 4 + count - 1;
  char* const start = p;
  p = put_be32(p, static_cast<uint32_t>(8 + 2 * ndigits));
  p = put_be16(p, static_cast<uint16_t>(ndigits));
  p = put_be16(p, static_cast<uint16_t>(static_cast<int16_t>(weight)));
  p = put_be16(p, n.mantissa < 0 ? 0x4000 : 0x0000);
  p = put_be16(p, static_cast<uint16_t>(scale));
  for (int i = count - 1; i >= first; --i) p = put_be16(p, groups[i]);
  (void)start;
  return p;
}

std::string avg_field_slow(const Vector& v, const Numeric& avg, bool binary) {
  Vector one(v.type);
  one.numerics.push_back(avg);
  one.count = 1;
  std::string value;
  if (binary) append_binary(value, one, 0);
  else append_text(value, one, 0);
  char length[4];
  put_be32(length, static_cast<uint32_t>(value.size()));
  value.insert(0, length, 4);
  return value;
}

}  // namespace tally::executor::row_encoding
