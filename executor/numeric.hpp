#pragma once
// An exact decimal for numeric results: a 128-bit mantissa scaled by 10^scale
// (PostgreSQL's dscale). It reproduces PostgreSQL 15's numeric scale rules
// (add: max scale, mul: sum of scales, div: select_div_scale, sqrt: the scale
// chosen by the caller) so that text output matches digit for digit. Values
// beyond 38 significant digits raise 22003 instead of growing like
// PostgreSQL's arbitrary-precision numeric.
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace tally::executor {

struct Numeric {
  __int128 mantissa = 0;
  int32_t scale = 0;

  // ±Infinity (PostgreSQL 15's numeric infinities), as extract() of an
  // infinite date answers it: marked by kInfiniteScale, mantissa ±1. It
  // prints, compares and converts to float8; arithmetic on it is 0A000.
  static constexpr int32_t kInfiniteScale = INT32_MIN;
  static Numeric infinity(bool negative) { return {negative ? -1 : 1, kInfiniteScale}; }
  bool is_infinite() const { return scale == kInfiniteScale; }

  static Numeric from_int(int64_t value) { return {value, 0}; }
  // PostgreSQL's float8 -> numeric: the value printed with 15 significant digits.
  static Numeric from_double(double value);
  // Numeric input syntax ("12.50", "-1e3", " 7 "); throws 22P02.
  static Numeric parse(std::string_view text);

  double to_double() const;
  // Rounds half away from zero to an integer; throws 22003 outside int64.
  int64_t to_int64() const;
  bool is_zero() const { return mantissa == 0; }
  int sign() const { return mantissa > 0 ? 1 : (mantissa < 0 ? -1 : 0); }

  // Same value at a scale >= or < the current one (rounding half away from zero).
  Numeric rescaled(int32_t new_scale) const;
  std::string to_string() const;
  void append_to(std::string& out) const;
};

Numeric operator+(const Numeric& a, const Numeric& b);
Numeric operator-(const Numeric& a, const Numeric& b);
Numeric operator-(const Numeric& a);
Numeric operator*(const Numeric& a, const Numeric& b);
// PostgreSQL's numeric_div: result scale from select_div_scale, rounded. 22012 on zero.
Numeric numeric_div(const Numeric& a, const Numeric& b);
// Division with an explicit result scale (rounded).
Numeric numeric_div_scale(const Numeric& a, const Numeric& b, int32_t rscale);
// numeric % numeric (truncated, scale max of the two); 22012 on zero.
Numeric numeric_mod(const Numeric& a, const Numeric& b);
// Square root rounded to rscale digits; a negative input is 2201F.
Numeric numeric_sqrt(const Numeric& a, int32_t rscale);
// The scale PostgreSQL's select_div_scale picks for a / b.
int32_t select_div_scale(const Numeric& a, const Numeric& b);
std::strong_ordering operator<=>(const Numeric& a, const Numeric& b);
bool operator==(const Numeric& a, const Numeric& b);

}  // namespace tally::executor
