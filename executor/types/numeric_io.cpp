// numeric(p,s) with p <= 18 held as an int64 scaled by 10^s: text input with
// PostgreSQL's rounding (half away from zero) and overflow errors, text output
// with exactly s fraction digits, and the base-10000 binary wire format.
#include <cstring>
#include <string>

#include "executor/types/type_io.hpp"

namespace tally::types {
namespace {

constexpr int max_digits = 38;  // what an __int128 holds exactly

__int128 pow10_128(int n) {
  __int128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != b[i]) return false;
  }
  return true;
}

void put_be16(std::string& out, uint16_t v) {
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v & 0xff);
}

}  // namespace

Error numeric_overflow(int precision, int scale) {
  const int maxdigits = precision - scale;
  std::string detail = "A field with precision " + std::to_string(precision) + ", scale " +
                       std::to_string(scale) + " must round to an absolute value less than " +
                       (maxdigits > 0 ? "10^" + std::to_string(maxdigits) : std::string("1")) + ".";
  return std::move(Error(SqlState::numeric_value_out_of_range, "numeric field overflow").with_detail(detail));
}

int64_t rescale_numeric(__int128 scaled, int from_scale, int precision, int scale) {
  if (from_scale > scale) {
    const __int128 div = pow10_128(from_scale - scale);
    __int128 q = scaled / div;
    const __int128 r = scaled % div;
    // Half away from zero.
    if (r * 2 >= div) ++q;
    else if (r * 2 <= -div) --q;
    scaled = q;
  } else if (from_scale < scale) {
    const int shift = scale - from_scale;
    const __int128 limit = pow10_128(precision);
    const __int128 mul = pow10_128(shift);
    if (scaled >= limit || scaled <= -limit) throw numeric_overflow(precision, scale);
    scaled *= mul;
  }
  const __int128 limit = pow10_128(precision);
  if (scaled >= limit || scaled <= -limit) throw numeric_overflow(precision, scale);
  return static_cast<int64_t>(scaled);
}

int64_t parse_numeric(std::string_view text, int precision, int scale) {
  std::string_view s = text;
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (iequals(s, "nan"))
    throw Error(SqlState::feature_not_supported, "NaN is not supported in numeric(" +
                std::to_string(precision) + "," + std::to_string(scale) + ") columns");
  if (iequals(s, "infinity") || iequals(s, "inf"))
    throw std::move(Error(SqlState::numeric_value_out_of_range, "numeric field overflow")
                        .with_detail("A field with precision " + std::to_string(precision) + ", scale " +
                                     std::to_string(scale) + " cannot hold an infinite value."));
  // Collect significant digits: value = digits * 10^exp10.
  char digits[max_digits + 2];
  int ndigits = 0;
  int dropped_int_digits = 0;  // integer digits beyond what we keep (overflow anyway)
  int exp10 = 0;
  bool any_digit = false, seen_point = false;
  char first_dropped = 0;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      if (ndigits == 0 && c == '0') {
        if (seen_point) --exp10;
        continue;
      }
      if (ndigits < max_digits) {
        digits[ndigits++] = c;
        if (seen_point) --exp10;
      } else {
        if (!seen_point) ++dropped_int_digits;
        else if (first_dropped == 0) first_dropped = c;
      }
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit) throw invalid_input("numeric", text);
  if (i < s.size()) {
    if (s[i] != 'e' && s[i] != 'E') throw invalid_input("numeric", text);
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
      exp_negative = s[i] == '-';
      ++i;
    }
    if (i == s.size()) throw invalid_input("numeric", text);
    long e = 0;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') throw invalid_input("numeric", text);
      if (e < 100000000) e = e * 10 + (s[i] - '0');
    }
    if (e > 1000)  // PostgreSQL's NUMERIC_MAX_DISPLAY_SCALE-ish bound on exponents
      throw Error(SqlState::invalid_text_representation, "invalid input syntax for type numeric: \"" + std::string(text) + "\"");
    exp10 += exp_negative ? -static_cast<int>(e) : static_cast<int>(e);
  }
  exp10 += dropped_int_digits;
  if (ndigits == 0) return 0;
  // scaled = digits * 10^(exp10 + scale), rounded.
  const int shift = exp10 + scale;
  __int128 value = 0;
  if (shift >= 0) {
    if (ndigits + shift > precision) throw numeric_overflow(precision, scale);
    for (int k = 0; k < ndigits; ++k) value = value * 10 + (digits[k] - '0');
    value *= pow10_128(shift);
  } else {
    const int keep = ndigits + shift;  // digits left of the rounding point
    if (keep < 0) return 0;
    for (int k = 0; k < keep; ++k) value = value * 10 + (digits[k] - '0');
    const char next = keep < ndigits ? digits[keep] : first_dropped;
    if (next >= '5') ++value;
    if (value >= pow10_128(precision)) throw numeric_overflow(precision, scale);
  }
  if (value >= pow10_128(precision)) throw numeric_overflow(precision, scale);
  return static_cast<int64_t>(negative ? -value : value);
}

void append_numeric(std::string& out, __int128 scaled, int scale) {
  char buf[64];
  int n = 0;
  const bool negative = scaled < 0;
  unsigned __int128 v = negative ? static_cast<unsigned __int128>(-(scaled + 1)) + 1
                                 : static_cast<unsigned __int128>(scaled);
  // Digits in reverse, at least scale + 1 of them.
  do {
    buf[n++] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  } while (v != 0 || n <= scale);
  if (negative) out += '-';
  for (int k = n - 1; k >= scale; --k) out += buf[k];
  if (scale > 0) {
    out += '.';
    for (int k = scale - 1; k >= 0; --k) out += buf[k];
  }
}

void append_numeric(std::string& out, int64_t scaled, int scale) {
  append_numeric(out, static_cast<__int128>(scaled), scale);
}

void send_numeric(std::string& out, __int128 scaled, int scale) {
  // PostgreSQL's NumericVar: base-10000 digits, weight = index of the first
  // digit's power of 10000, leading and trailing zero digits stripped.
  const bool negative = scaled < 0;
  unsigned __int128 v = negative ? static_cast<unsigned __int128>(-(scaled + 1)) + 1
                                 : static_cast<unsigned __int128>(scaled);
  // Align the fraction to a multiple of 4 decimal digits.
  const int frac_groups = (scale + 3) / 4;
  for (int k = scale; k < frac_groups * 4; ++k) v *= 10;
  uint16_t groups[24];
  int ngroups = 0;
  while (v != 0) {
    groups[ngroups++] = static_cast<uint16_t>(v % 10000);
    v /= 10000;
  }
  // groups[0] is the least significant; its weight is -frac_groups.
  int low = 0;
  while (low < ngroups && groups[low] == 0) ++low;
  int high = ngroups - 1;
  const int ndigits = ngroups == 0 || low > high ? 0 : high - low + 1;
  const int weight = ndigits == 0 ? 0 : high - frac_groups;
  put_be16(out, static_cast<uint16_t>(ndigits));
  put_be16(out, static_cast<uint16_t>(static_cast<int16_t>(weight)));
  put_be16(out, ndigits == 0 ? 0 : (negative ? 0x4000 : 0x0000));
  put_be16(out, static_cast<uint16_t>(scale));
  for (int k = high; ndigits && k >= low; --k) put_be16(out, groups[k]);
}

void send_numeric(std::string& out, int64_t scaled, int scale) {
  send_numeric(out, static_cast<__int128>(scaled), scale);
}

int64_t recv_numeric(std::string_view bytes, int precision, int scale) {
  auto be16 = [&](size_t off) {
    return static_cast<uint16_t>((static_cast<uint8_t>(bytes[off]) << 8) | static_cast<uint8_t>(bytes[off + 1]));
  };
  if (bytes.size() < 8) throw Error(SqlState::invalid_binary_representation, "insufficient data left in message");
  const int ndigits = be16(0);
  const int weight = static_cast<int16_t>(be16(2));
  const uint16_t sign = be16(4);
  if (bytes.size() != 8 + 2 * static_cast<size_t>(ndigits))
    throw Error(SqlState::invalid_binary_representation, "incorrect binary data format");
  if (sign != 0x0000 && sign != 0x4000) {
    if (sign == 0xC000)
      throw Error(SqlState::feature_not_supported, "NaN is not supported in numeric(" +
                  std::to_string(precision) + "," + std::to_string(scale) + ") columns");
    throw Error(SqlState::invalid_binary_representation, "invalid sign in external \"numeric\" value");
  }
  // value = sum(d_k * 10000^(weight - k)); compute scaled by 10^scale with rounding.
  // Digits far below the scale only matter for rounding: keep them in a tail.
  __int128 acc = 0;  // value * 10000^(frac_groups) where frac_groups covers `scale`
  const int frac_groups = (scale + 3) / 4 + 1;  // one extra group for rounding
  const __int128 limit = pow10_128(precision) * pow10_128(frac_groups * 4 - scale);
  for (int k = 0; k < ndigits; ++k) {
    const int d = be16(8 + 2 * k);
    if (d >= 10000) throw Error(SqlState::invalid_binary_representation, "invalid digit in external \"numeric\" value");
    const int power = weight - k + frac_groups;  // exponent of 10000 in acc units
    if (power < 0) break;  // beyond the rounding group: cannot change half-up rounding of an exact decimal past 4 digits? keep simple
    if (power > 10) throw numeric_overflow(precision, scale);
    __int128 term = d;
    for (int p = 0; p < power; ++p) term *= 10000;
    acc += term;
    if (acc >= limit * 10) throw numeric_overflow(precision, scale);
  }
  const __int128 scaled = sign == 0x4000 ? -acc : acc;
  return rescale_numeric(scaled, frac_groups * 4, precision, scale);
}

}  // namespace tally::types
