// numeric(p,s) with p <= 18 held as an int64 scaled by 10^s: text input with
// PostgreSQL's rounding (half away from zero) and overflow errors, text output
// with exactly s fraction digits, and the base-10000 binary wire format.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>
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

Error too_many_digits() {
  return Error(SqlState::feature_not_supported,
               "numeric values with more than 38 significant digits are not supported by Tally");
}

// The exponent part of a numeric literal ("", or [eE][+-]digits, the whole
// rest of the input): its signed value. 22P02 when malformed or when its
// magnitude exceeds 1000 (numeric_in's bound, NUMERIC_MAX_PRECISION).
long parse_exponent(std::string_view rest, std::string_view text) {
  if (rest.empty()) return 0;
  if (rest[0] != 'e' && rest[0] != 'E') throw invalid_input("numeric", text);
  size_t i = 1;
  bool negative = false;
  if (i < rest.size() && (rest[i] == '+' || rest[i] == '-')) {
    negative = rest[i] == '-';
    ++i;
  }
  if (i == rest.size()) throw invalid_input("numeric", text);
  long e = 0;
  for (; i < rest.size(); ++i) {
    if (rest[i] < '0' || rest[i] > '9') throw invalid_input("numeric", text);
    if (e < 100000000) e = e * 10 + (rest[i] - '0');
  }
  if (e > 1000) throw invalid_input("numeric", text);
  return negative ? -e : e;
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
  return static_cast<int64_t>(rescale_numeric128(scaled, from_scale, std::min(precision, 18), scale));
}

__int128 parse_numeric128(std::string_view text, int precision, int scale) {
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
  exp10 += static_cast<int>(parse_exponent(s.substr(i), text));
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
  return negative ? -value : value;
}

int64_t parse_numeric(std::string_view text, int precision, int scale) {
  return static_cast<int64_t>(parse_numeric128(text, std::min(precision, 18), scale));
}

NumericValue parse_numeric_any(std::string_view text) {
  // numeric_in without a typmod: every digit written is kept, and the display
  // scale is the number of fraction digits minus the exponent (never < 0).
  std::string_view s = text;
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (iequals(s, "nan") || iequals(s, "infinity") || iequals(s, "inf"))
    throw Error(SqlState::feature_not_supported, "numeric NaN and infinity are not supported by Tally");
  unsigned __int128 digits = 0;
  int significant = 0, fraction_digits = 0;
  bool any_digit = false, seen_point = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      any_digit = true;
      if (seen_point) ++fraction_digits;
      if (significant > 0 || c != '0') ++significant;
      if (significant > max_digits) throw too_many_digits();
      digits = digits * 10 + static_cast<unsigned>(c - '0');
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit) throw invalid_input("numeric", text);
  const long exponent = parse_exponent(s.substr(i), text);
  NumericValue v;
  const long dscale = fraction_digits - exponent;
  if (dscale >= 0) {
    v.scale = static_cast<int32_t>(dscale);
  } else {
    // 1.5e5: the digits shifted left; no fraction digits remain.
    if (digits != 0 && significant - dscale > max_digits) throw too_many_digits();
    for (long k = 0; k < -dscale && digits != 0; ++k) digits *= 10;
  }
  v.mantissa = negative ? -static_cast<__int128>(digits) : static_cast<__int128>(digits);
  return v;
}

__int128 rescale_numeric128(__int128 scaled, int from_scale, int precision, int scale) {
  if (from_scale > scale) {
    const int drop = from_scale - scale;
    if (drop > max_digits) {
      scaled = 0;  // |value| < 10^38 / 10^39: rounds to zero
    } else {
      const __int128 div = pow10_128(drop);
      __int128 q = scaled / div;
      const __int128 r = scaled % div;
      if (r >= div - r) ++q;  // half away from zero, without overflowing r * 2
      else if (-r >= div + r) --q;
      scaled = q;
    }
  } else if (from_scale < scale && scaled != 0) {
    const int shift = scale - from_scale;
    // The result must stay below 10^precision: check before multiplying.
    if (shift >= precision) throw numeric_overflow(precision, scale);
    const __int128 limit = pow10_128(precision - shift);
    if (scaled >= limit || scaled <= -limit) throw numeric_overflow(precision, scale);
    scaled *= pow10_128(shift);
  }
  const __int128 limit = pow10_128(precision);
  if (scaled >= limit || scaled <= -limit) throw numeric_overflow(precision, scale);
  return scaled;
}

void append_numeric(std::string& out, __int128 scaled, int scale) {
  // Up to 39 digits, or scale + 1 when the scale is larger (0.000...1).
  char stack[64];
  std::string heap;
  char* buf = stack;
  if (scale + 2 > static_cast<int>(sizeof stack)) {
    heap.resize(static_cast<size_t>(scale) + 2);
    buf = heap.data();
  }
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
  // digit's power of 10000, leading and trailing zero digits stripped. The
  // decimal digits are grouped from the decimal point outwards (no
  // multiplication, so 38-digit mantissas cannot overflow).
  const bool negative = scaled < 0;
  std::string dec;
  append_numeric(dec, negative ? -(scaled + 1) : scaled, 0);  // magnitude - 1 when negative
  if (negative) {
    // Add the 1 back in decimal (-(scaled + 1) avoids overflowing INT128_MIN).
    int k = static_cast<int>(dec.size()) - 1;
    while (k >= 0 && dec[static_cast<size_t>(k)] == '9') dec[static_cast<size_t>(k--)] = '0';
    if (k < 0) dec.insert(dec.begin(), '1');
    else ++dec[static_cast<size_t>(k)];
  }
  // dec holds mantissa digits; the last `scale` are fraction digits.
  const int frac_groups = (scale + 3) / 4;
  dec.append(static_cast<size_t>(frac_groups * 4 - scale), '0');
  const int total = static_cast<int>(dec.size());
  const int int_len = total - frac_groups * 4;  // may be <= 0
  const int int_groups = int_len > 0 ? (int_len + 3) / 4 : 0;
  // Left-pad to whole groups: the integer part to int_groups * 4 digits, or a
  // pure fraction to frac_groups * 4 digits.
  if (int_len > 0) dec.insert(0, static_cast<size_t>(int_groups * 4 - int_len), '0');
  else dec.insert(0, static_cast<size_t>(frac_groups * 4 - total), '0');
  std::vector<uint16_t> groups;  // most significant first; groups[0] has weight int_groups - 1
  for (size_t k = 0; k + 4 <= dec.size(); k += 4) {
    groups.push_back(static_cast<uint16_t>((dec[k] - '0') * 1000 + (dec[k + 1] - '0') * 100 + (dec[k + 2] - '0') * 10 +
                                           (dec[k + 3] - '0')));
  }
  int first = 0, last = static_cast<int>(groups.size()) - 1;
  while (first <= last && groups[static_cast<size_t>(first)] == 0) ++first;
  while (last >= first && groups[static_cast<size_t>(last)] == 0) --last;
  const int ndigits = first > last ? 0 : last - first + 1;
  const int weight = ndigits == 0 ? 0 : int_groups - 1 - first;
  put_be16(out, static_cast<uint16_t>(ndigits));
  put_be16(out, static_cast<uint16_t>(static_cast<int16_t>(weight)));
  put_be16(out, ndigits == 0 ? 0 : (negative ? 0x4000 : 0x0000));
  put_be16(out, static_cast<uint16_t>(scale));
  for (int k = first; k <= last; ++k) put_be16(out, groups[static_cast<size_t>(k)]);
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

NumericValue recv_numeric_any(std::string_view bytes) {
  auto be16 = [&](size_t off) {
    return static_cast<uint16_t>((static_cast<uint8_t>(bytes[off]) << 8) | static_cast<uint8_t>(bytes[off + 1]));
  };
  if (bytes.size() < 8) throw Error(SqlState::invalid_binary_representation, "insufficient data left in message");
  const int ndigits = be16(0);
  const int weight = static_cast<int16_t>(be16(2));
  const uint16_t sign = be16(4);
  const int dscale = be16(6);
  if (bytes.size() != 8 + 2 * static_cast<size_t>(ndigits))
    throw Error(SqlState::invalid_binary_representation, "incorrect binary data format");
  if (sign != 0x0000 && sign != 0x4000) {
    if (sign == 0xC000) throw Error(SqlState::feature_not_supported, "numeric NaN is not supported by Tally");
    throw Error(SqlState::invalid_binary_representation, "invalid sign in external \"numeric\" value");
  }
  if (dscale > 0x3FFF) throw Error(SqlState::invalid_binary_representation, "invalid scale in external \"numeric\" value");
  // The decimal digits, then the mantissa at dscale (numeric_recv keeps dscale
  // digits after the point; digits beyond it are dropped, as trunc_var does).
  std::string dec;
  for (int k = 0; k < ndigits; ++k) {
    const int d = be16(8 + 2 * static_cast<size_t>(k));
    if (d >= 10000) throw Error(SqlState::invalid_binary_representation, "invalid digit in external \"numeric\" value");
    char four[5];
    std::snprintf(four, sizeof four, "%04d", d);
    dec += four;
  }
  // dec * 10^(4 * (weight - ndigits + 1)) as text in exponent form.
  const long exponent = 4L * (weight - ndigits + 1);
  std::string text = (sign == 0x4000 ? "-0" : "0") + dec + "e" + std::to_string(exponent);
  NumericValue v;
  if (ndigits == 0) {
    v.scale = dscale;
    return v;
  }
  // Exact value first (may carry more fraction digits than dscale), then cut to dscale.
  const long fraction = -exponent;
  if (fraction > dscale) {
    std::string cut = dec;
    const long drop = fraction - dscale;
    if (drop >= static_cast<long>(cut.size())) cut = "0";
    else cut.resize(cut.size() - static_cast<size_t>(drop));
    v = parse_numeric_any((sign == 0x4000 ? "-" : "") + cut + "e" + std::to_string(-static_cast<long>(dscale)));
    v.scale = dscale;
    return v;
  }
  v = parse_numeric_any(text);
  // Widen to dscale (extra trailing zeros that the wire form stripped).
  while (v.scale < dscale) {
    if (v.mantissa > pow10_128(max_digits) / 10 || v.mantissa < -pow10_128(max_digits) / 10) throw too_many_digits();
    v.mantissa *= 10;
    ++v.scale;
  }
  return v;
}

}  // namespace tally::types
