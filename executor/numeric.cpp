#include "executor/numeric.hpp"

#include <boost/multiprecision/cpp_int.hpp>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/error.hpp"

namespace tally::executor {
namespace {

using Big = boost::multiprecision::cpp_int;

// PostgreSQL's limits on computed scales (numeric.c).
constexpr int32_t kMinSigDigits = 16;     // NUMERIC_MIN_SIG_DIGITS
constexpr int32_t kMaxDisplayScale = 1000;  // NUMERIC_MAX_DISPLAY_SCALE
constexpr int32_t kDecDigits = 4;          // DEC_DIGITS: base-10000 digits

Error overflow() { return Error(SqlState::numeric_value_out_of_range, "value overflows numeric format"); }

// Arithmetic on numeric infinities is not implemented: a clean 0A000 rather than a wrong value.
void check_finite(const Numeric& a, const Numeric& b) {
  if (a.is_infinite() || b.is_infinite()) {
    throw Error(SqlState::feature_not_supported, "arithmetic on numeric infinity is not supported");
  }
}

Big to_big(__int128 v) {
  const bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  Big b = static_cast<uint64_t>(u >> 64);
  b <<= 64;
  b += static_cast<uint64_t>(u);
  return negative ? Big(-b) : b;
}

__int128 from_big(const Big& b) {
  static const Big limit = (Big(1) << 127) - 1;
  if (b > limit || b < -limit) throw overflow();
  const bool negative = b < 0;
  Big u = negative ? Big(-b) : b;
  const auto low = static_cast<uint64_t>(u & Big(UINT64_MAX));
  const auto high = static_cast<uint64_t>(u >> 64);
  unsigned __int128 r = (static_cast<unsigned __int128>(high) << 64) | low;
  return negative ? -static_cast<__int128>(r) : static_cast<__int128>(r);
}

// 10^n as int128 for n <= 38.
constexpr unsigned __int128 pow10_u128(int n) {
  unsigned __int128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}
struct Pow10Table {
  unsigned __int128 v[39];
  constexpr Pow10Table() : v() {
    for (int i = 0; i < 39; ++i) v[i] = pow10_u128(i);
  }
};
constexpr Pow10Table kPow10;

Big pow10_big(int n) {
  Big r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

// Rounds num / den half away from zero (PostgreSQL's round_var on an exact quotient).
Big div_round(const Big& num, const Big& den) {
  Big q = num / den;
  Big r = num % den;
  if (r != 0 && abs(r) * 2 >= abs(den)) q += ((num < 0) != (den < 0)) ? -1 : 1;
  return q;
}

unsigned __int128 magnitude(__int128 v) {
  return v < 0 ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
}

int decimal_digits(unsigned __int128 v) {
  int d = 0;
  while (d < 39 && v >= kPow10.v[d]) ++d;
  return d;
}

// Base-10000 weight and leading digit of a value, as NumericVar holds them.
void weight_and_first_digit(const Numeric& n, int& weight, int& first_digit) {
  if (n.mantissa == 0) { weight = 0; first_digit = 0; return; }
  const auto m = magnitude(n.mantissa);
  const int e = decimal_digits(m) - 1 - n.scale;  // decimal exponent of the leading digit
  weight = e >= 0 ? e / kDecDigits : -((-e + kDecDigits - 1) / kDecDigits);
  const int shift = n.scale + kDecDigits * weight;
  // The leading base-10000 digit has at most 4 decimal digits, so the
  // shifted value always fits.
  if (shift >= 0) first_digit = static_cast<int>(m / kPow10.v[shift]);
  else first_digit = static_cast<int>(m * kPow10.v[-shift]);
}

Big aligned(const Numeric& n, int32_t scale) {
  return to_big(n.mantissa) * pow10_big(scale - n.scale);
}

}  // namespace

Numeric Numeric::from_double(double value) {
  if (std::isnan(value) || std::isinf(value)) {
    throw Error(SqlState::feature_not_supported, "NaN and infinity are not supported in numeric results");
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*g", DBL_DIG, value);
  return parse(buffer);
}

Numeric Numeric::parse(std::string_view text) {
  auto bad = [&] {
    return Error(SqlState::invalid_text_representation,
                 "invalid input syntax for type numeric: \"" + std::string(text) + "\"");
  };
  size_t i = 0;
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (i < text.size() && space(text[i])) ++i;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  Big digits = 0;
  int fraction_digits = 0;
  bool any = false, point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      digits = digits * 10 + (c - '0');
      any = true;
      if (point) ++fraction_digits;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!any) {
    std::string_view rest = text.substr(i);
    while (!rest.empty() && space(rest.back())) rest.remove_suffix(1);
    if (rest == "NaN" || rest == "nan" || rest == "Infinity" || rest == "infinity" || rest == "inf") {
      throw Error(SqlState::feature_not_supported, "numeric NaN and infinity are not supported");
    }
    throw bad();
  }
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    bool exp_any = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      exponent = exponent * 10 + (text[i] - '0');
      exp_any = true;
      if (exponent > 100000) throw bad();
    }
    if (!exp_any) throw bad();
    if (exp_negative) exponent = -exponent;
  }
  while (i < text.size() && space(text[i])) ++i;
  if (i != text.size()) throw bad();
  // value = digits * 10^(exponent - fraction_digits); dscale = max(0, fraction_digits - exponent).
  int64_t scale = fraction_digits - exponent;
  Numeric result;
  if (scale >= 0) {
    result.scale = static_cast<int32_t>(scale);
    result.mantissa = from_big(negative ? Big(-digits) : digits);
  } else {
    result.scale = 0;
    Big v = digits * pow10_big(static_cast<int>(-scale));
    result.mantissa = from_big(negative ? Big(-v) : v);
  }
  return result;
}

double Numeric::to_double() const {
  if (is_infinite()) return mantissa < 0 ? -HUGE_VAL : HUGE_VAL;
  return std::strtod(to_string().c_str(), nullptr);
}

int64_t Numeric::to_int64() const {
  if (is_infinite()) throw Error(SqlState::feature_not_supported, "cannot convert infinity to bigint");
  const Numeric r = rescaled(0);
  if (r.mantissa > INT64_MAX || r.mantissa < INT64_MIN) {
    throw Error(SqlState::numeric_value_out_of_range, "bigint out of range");
  }
  return static_cast<int64_t>(r.mantissa);
}

Numeric Numeric::rescaled(int32_t new_scale) const {
  if (new_scale == scale) return *this;
  if (is_infinite()) throw Error(SqlState::feature_not_supported, "numeric infinity cannot be rescaled");
  const int diff = new_scale > scale ? new_scale - scale : scale - new_scale;
  if (diff <= 38) {
    const auto p = static_cast<__int128>(kPow10.v[diff]);
    if (new_scale > scale) {
      __int128 r;
      if (!__builtin_mul_overflow(mantissa, p, &r)) return {r, new_scale};
    } else {
      __int128 q = mantissa / p, rem = mantissa % p;
      if ((rem < 0 ? -rem : rem) * 2 >= p) q += mantissa < 0 ? -1 : 1;
      return {q, new_scale};
    }
  }
  if (new_scale > scale) return {from_big(to_big(mantissa) * pow10_big(new_scale - scale)), new_scale};
  return {from_big(div_round(to_big(mantissa), pow10_big(scale - new_scale))), new_scale};
}

void Numeric::append_to(std::string& out) const {
  if (is_infinite()) {
    out += mantissa < 0 ? "-Infinity" : "Infinity";
    return;
  }
  char buffer[64];
  int n = 0;
  unsigned __int128 m = magnitude(mantissa);
  // Peel 19-digit blocks with one 128-bit division each, then 64-bit digits.
  while (m > UINT64_MAX) {
    uint64_t block = static_cast<uint64_t>(m % 10000000000000000000ULL);
    m /= 10000000000000000000ULL;
    for (int i = 0; i < 19; ++i) { buffer[n++] = static_cast<char>('0' + block % 10); block /= 10; }
  }
  uint64_t low = static_cast<uint64_t>(m);
  do {
    buffer[n++] = static_cast<char>('0' + low % 10);
    low /= 10;
  } while (low != 0);
  if (mantissa < 0) out.push_back('-');
  if (n <= scale) {
    // No integer digit: "0.", the leading zeros of the fraction (a literal
    // such as 1e-100 has a scale far beyond the mantissa's 39 digits), the digits.
    out += "0.";
    out.append(static_cast<size_t>(scale - n), '0');
    for (int i = n - 1; i >= 0; --i) out.push_back(buffer[i]);
    return;
  }
  for (int i = n - 1; i >= 0; --i) {
    out.push_back(buffer[i]);
    if (i == scale && scale > 0) out.push_back('.');
  }
}

std::string Numeric::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

Numeric operator+(const Numeric& a, const Numeric& b) {
  check_finite(a, b);
  const int32_t s = std::max(a.scale, b.scale);
  __int128 x, y, r;
  if (s == a.scale && s == b.scale && !__builtin_add_overflow(a.mantissa, b.mantissa, &r)) return {r, s};
  // rescaled() aligns in 128-bit arithmetic (1 - l_discount: 0 and 2
  // digits) and throws the same overflow where the aligned value does not fit.
  x = a.rescaled(s).mantissa;
  y = b.rescaled(s).mantissa;
  if (__builtin_add_overflow(x, y, &r)) throw overflow();
  return {r, s};
}

Numeric operator-(const Numeric& a) { return {-a.mantissa, a.scale}; }
Numeric operator-(const Numeric& a, const Numeric& b) { return a + (-b); }

Numeric operator*(const Numeric& a, const Numeric& b) {
  check_finite(a, b);
  __int128 r;
  if (!__builtin_mul_overflow(a.mantissa, b.mantissa, &r)) return {r, a.scale + b.scale};
  return {from_big(to_big(a.mantissa) * to_big(b.mantissa)), a.scale + b.scale};
}

int32_t select_div_scale(const Numeric& a, const Numeric& b) {
  int weight1, first1, weight2, first2;
  weight_and_first_digit(a, weight1, first1);
  weight_and_first_digit(b, weight2, first2);
  // If the first digits are equal we cannot be sure; assume a < b (PostgreSQL).
  int qweight = weight1 - weight2;
  if (first1 <= first2) --qweight;
  int32_t rscale = kMinSigDigits - qweight * kDecDigits;
  rscale = std::max(rscale, a.scale);
  rscale = std::max(rscale, b.scale);
  rscale = std::max(rscale, 0);
  return std::min(rscale, kMaxDisplayScale);
}

Numeric numeric_div_scale(const Numeric& a, const Numeric& b, int32_t rscale) {
  check_finite(a, b);
  if (b.mantissa == 0) throw Error(SqlState::division_by_zero, "division by zero");
  // a/b * 10^rscale = a.m * 10^(rscale + b.s - a.s) / b.m
  const int shift = rscale + b.scale - a.scale;
  if (shift >= 0 && shift <= 38) {
    __int128 num128;
    if (!__builtin_mul_overflow(a.mantissa, static_cast<__int128>(kPow10.v[shift]), &num128)) {
      __int128 q = num128 / b.mantissa, r = num128 % b.mantissa;
      const unsigned __int128 ar = r < 0 ? -static_cast<unsigned __int128>(r) : static_cast<unsigned __int128>(r);
      const unsigned __int128 ab = b.mantissa < 0 ? -static_cast<unsigned __int128>(b.mantissa) : static_cast<unsigned __int128>(b.mantissa);
      if (r != 0 && ar * 2 >= ab) q += ((num128 < 0) != (b.mantissa < 0)) ? -1 : 1;
      return {q, rscale};
    }
  }
  Big num = to_big(a.mantissa), den = to_big(b.mantissa);
  if (shift >= 0) num *= pow10_big(shift); else den *= pow10_big(-shift);
  return {from_big(div_round(num, den)), rscale};
}

Numeric numeric_div(const Numeric& a, const Numeric& b) {
  check_finite(a, b);
  if (b.mantissa == 0) throw Error(SqlState::division_by_zero, "division by zero");
  return numeric_div_scale(a, b, select_div_scale(a, b));
}

Numeric numeric_mod(const Numeric& a, const Numeric& b) {
  check_finite(a, b);
  if (b.mantissa == 0) throw Error(SqlState::division_by_zero, "division by zero");
  const int32_t s = std::max(a.scale, b.scale);
  return {from_big(aligned(a, s) % aligned(b, s)), s};
}

Numeric numeric_sqrt(const Numeric& a, int32_t rscale) {
  check_finite(a, a);
  if (a.mantissa < 0) {
    throw Error(SqlState::invalid_argument_for_power_function,
                "cannot take square root of a negative number");
  }
  // floor(sqrt(a) * 10^(rscale+1)), then round the guard digit half up.
  const int shift = 2 * (rscale + 1) - a.scale;
  Big v = to_big(a.mantissa);
  Big r;
  if (shift >= 0) {
    r = boost::multiprecision::sqrt(v * pow10_big(shift));
  } else {
    // Odd cases (scale above 2*rscale+2): drop the excess digits first.
    r = boost::multiprecision::sqrt(v / pow10_big(-shift));
  }
  Big q = r / 10;
  if (r % 10 >= 5) q += 1;
  return {from_big(q), rscale};
}

std::strong_ordering operator<=>(const Numeric& a, const Numeric& b) {
  if (a.is_infinite() || b.is_infinite()) {
    // An infinity is beyond every finite value; equal infinities are equal.
    auto rank = [](const Numeric& n) { return n.is_infinite() ? (n.mantissa < 0 ? -1 : 1) : 0; };
    return rank(a) <=> rank(b);
  }
  if (a.scale == b.scale) return a.mantissa <=> b.mantissa;
  {
    const int32_t s = std::max(a.scale, b.scale);
    __int128 x, y;
    if (s - a.scale <= 38 && s - b.scale <= 38 &&
        !__builtin_mul_overflow(a.mantissa, static_cast<__int128>(kPow10.v[s - a.scale]), &x) &&
        !__builtin_mul_overflow(b.mantissa, static_cast<__int128>(kPow10.v[s - b.scale]), &y)) {
      return x <=> y;
    }
  }
  const int32_t s = std::max(a.scale, b.scale);
  const Big x = aligned(a, s), y = aligned(b, s);
  if (x < y) return std::strong_ordering::less;
  if (x > y) return std::strong_ordering::greater;
  return std::strong_ordering::equal;
}

bool operator==(const Numeric& a, const Numeric& b) { return (a <=> b) == 0; }

}  // namespace tally::executor
