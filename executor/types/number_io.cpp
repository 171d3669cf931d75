// Text input/output of boolean, integers and floats, as PostgreSQL 15's
// boolin/boolout, int2in..int8out and float4in..float8out.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "executor/types/type_io.hpp"

namespace tally::types {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool iequals_prefix(std::string_view input, std::string_view word) {
  // input is a (non-empty) prefix of word, case-insensitively.
  if (input.empty() || input.size() > word.size()) return false;
  for (size_t i = 0; i < input.size(); ++i) {
    char c = input[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[i]) return false;
  }
  return true;
}

Error out_of_range_value(std::string_view text, std::string_view type_name) {
  return Error(SqlState::numeric_value_out_of_range,
               "value \"" + std::string(text) + "\" is out of range for type " + std::string(type_name));
}

// PostgreSQL's pg_strtoint64-style parser: optional whitespace, sign, digits,
// optional whitespace; anything else is 22P02, overflow is 22003.
template <class T>
T parse_integer(std::string_view text, std::string_view type_name) {
  // Fast path: optional '-', then 1..(digits10) digits cannot overflow T
  // (COPY parses millions of these).
  {
    const char* p = text.data();
    const char* end = p + text.size();
    const bool neg = p < end && *p == '-';
    p += neg;
    const auto n = static_cast<size_t>(end - p);
    if (n > 0 && n <= static_cast<size_t>(std::numeric_limits<T>::digits10)) {
      int64_t v = 0;
      bool ok = true;
      for (; p < end; ++p) {
        const unsigned d = static_cast<unsigned>(*p - '0');
        ok &= d <= 9;
        v = v * 10 + d;
      }
      if (ok) return static_cast<T>(neg ? -v : v);
    }
  }
  std::string_view s = trim(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) throw invalid_input(type_name, text);
  // Accumulate negatively so that the minimum value parses without overflow.
  int64_t acc = 0;
  constexpr int64_t min = std::numeric_limits<T>::min();
  bool overflow = false;
  for (char c : s) {
    if (c < '0' || c > '9') throw invalid_input(type_name, text);
    const int digit = c - '0';
    if (!overflow) {
      const __int128 next = static_cast<__int128>(acc) * 10 - digit;
      if (next < min) overflow = true;
      else acc = static_cast<int64_t>(next);
    }
  }
  if (overflow) throw out_of_range_value(text, type_name);
  if (!negative) {
    if (acc == min) throw out_of_range_value(text, type_name);
    acc = -acc;
  }
  return static_cast<T>(acc);
}

// Formats shortest round-trip digits the way PostgreSQL's ryu-based
// float8out/float4out does: fixed notation when -4 <= exponent < threshold,
// otherwise d.ddde+XX with at least two exponent digits.
template <class F>
void append_float(std::string& out, F value, int fixed_threshold) {
  if (std::isnan(value)) { out += "NaN"; return; }
  if (std::isinf(value)) { out += value > 0 ? "Infinity" : "-Infinity"; return; }
  if (value == 0) { out += std::signbit(value) ? "-0" : "0"; return; }
  char sci[64];
  auto res = std::to_chars(sci, sci + sizeof sci, value, std::chars_format::scientific);
  if constexpr (std::is_same_v<F, float>) {
    // libstdc++ accepts a shortest candidate lying exactly on the midpoint to
    // a neighbouring float (round-half-even brings it back); PostgreSQL's Ryu
    // does not, and prints more digits (-101903904::float4 is
    // "-1.01903904e+08", not "-1.019039e+08"). Lengthen until strictly inside.
    const double lo = (static_cast<double>(value) + static_cast<double>(std::nextafter(value, -INFINITY))) / 2;
    const double hi = (static_cast<double>(value) + static_cast<double>(std::nextafter(value, INFINITY))) / 2;
    int digits = 0;
    for (char* p = sci; p < res.ptr && *p != 'e'; ++p) digits += *p >= '0' && *p <= '9';
    for (; digits <= 9; ++digits) {
      double back = 0;
      std::from_chars(sci, res.ptr, back);
      if (back != lo && back != hi) break;
      // `digits` fraction digits = one more significant digit than before.
      res = std::to_chars(sci, sci + sizeof sci, value, std::chars_format::scientific, digits);
      // Drop trailing zeros of the mantissa, as the shortest form would.
      char* e = std::find(sci, res.ptr, 'e');
      char* m = e;
      while (m > sci && m[-1] == '0') --m;
      if (m > sci && m[-1] == '.') --m;
      std::memmove(m, e, static_cast<size_t>(res.ptr - e));
      res.ptr = m + (res.ptr - e);
    }
  }
  const std::string_view s(sci, static_cast<size_t>(res.ptr - sci));
  // s = [-]d[.ddd]e(+|-)XX
  const size_t e_pos = s.find('e');
  std::string_view mantissa = s.substr(0, e_pos);
  int exponent = 0;
  std::from_chars(s.data() + e_pos + (s[e_pos + 1] == '+' ? 2 : 1), s.data() + s.size(), exponent);
  const bool negative = mantissa.front() == '-';
  if (negative) mantissa.remove_prefix(1);
  char digits[32];
  size_t ndigits = 0;
  for (char c : mantissa) if (c != '.') digits[ndigits++] = c;
  if (exponent < -4 || exponent >= fixed_threshold) {
    if (negative) out += '-';
    out += digits[0];
    if (ndigits > 1) { out += '.'; out.append(digits + 1, ndigits - 1); }
    out += 'e';
    out += exponent < 0 ? '-' : '+';
    const int abs_exp = exponent < 0 ? -exponent : exponent;
    if (abs_exp < 10) out += '0';
    append_int(out, abs_exp);
    return;
  }
  if (negative) out += '-';
  if (exponent < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exponent - 1), '0');
    out.append(digits, ndigits);
    return;
  }
  const size_t int_digits = static_cast<size_t>(exponent) + 1;
  if (ndigits <= int_digits) {
    out.append(digits, ndigits);
    out.append(int_digits - ndigits, '0');
  } else {
    out.append(digits, int_digits);
    out += '.';
    out.append(digits + int_digits, ndigits - int_digits);
  }
}

// float4in/float8in: strtod semantics (inf/infinity/nan accepted, whitespace
// around), ERANGE to zero or infinity is 22003.
template <class F>
F parse_float(std::string_view text, std::string_view type_name) {
  std::string_view s = trim(text);
  if (s.empty()) throw invalid_input(type_name, text);
  // std::from_chars (fast_float in libstdc++ 12) for the common case; it
  // rejects a leading '+', so skip it by hand.
  std::string_view body = s;
  bool negative = false;
  if (body.front() == '+' || body.front() == '-') {
    negative = body.front() == '-';
    body.remove_prefix(1);
    if (!body.empty() && (body.front() == '+' || body.front() == '-'))
      throw invalid_input(type_name, text);
  }
  F value{};
  auto res = std::from_chars(body.data(), body.data() + body.size(), value, std::chars_format::general);
  if (res.ec == std::errc() && res.ptr == body.data() + body.size()) {
    return negative ? -value : value;
  }
  if (res.ec == std::errc::invalid_argument || (res.ec == std::errc() && res.ptr != body.data() + body.size()))
    throw invalid_input(type_name, text);
  // Out of range per from_chars: let strtod decide (denormals are accepted).
  char buf[512];
  if (s.size() >= sizeof buf) throw Error(SqlState::numeric_value_out_of_range,
                                          "\"" + std::string(s) + "\" is out of range for type " + std::string(type_name));
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = 0;
  errno = 0;
  char* end = nullptr;
  F v;
  if constexpr (std::is_same_v<F, float>) v = std::strtof(buf, &end);
  else v = std::strtod(buf, &end);
  if (end != buf + s.size()) throw invalid_input(type_name, text);
  if (errno == ERANGE && (v == 0 || std::isinf(v)))
    throw Error(SqlState::numeric_value_out_of_range,
                "\"" + std::string(text) + "\" is out of range for type " + std::string(type_name));
  return v;
}

}  // namespace

Error invalid_input(std::string_view type_name, std::string_view text) {
  return Error(SqlState::invalid_text_representation,
               "invalid input syntax for type " + std::string(type_name) + ": \"" + std::string(text) + "\"");
}

void append_bool(std::string& out, bool value) { out += value ? 't' : 'f'; }

void append_int(std::string& out, int64_t value) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, static_cast<size_t>(res.ptr - buf));
}

void append_float8(std::string& out, double value) { append_float(out, value, 15); }
void append_float4(std::string& out, float value) { append_float(out, value, 6); }

bool parse_bool(std::string_view text) {
  const std::string_view s = trim(text);
  if (!s.empty()) {
    switch (s.front()) {
      case 't': case 'T': if (iequals_prefix(s, "true")) return true; break;
      case 'f': case 'F': if (iequals_prefix(s, "false")) return false; break;
      case 'y': case 'Y': if (iequals_prefix(s, "yes")) return true; break;
      case 'n': case 'N': if (iequals_prefix(s, "no")) return false; break;
      case 'o': case 'O':
        // "o" alone is ambiguous between on and off.
        if (s.size() >= 2 && iequals_prefix(s, "on")) return true;
        if (s.size() >= 2 && iequals_prefix(s, "off")) return false;
        break;
      case '1': if (s.size() == 1) return true; break;
      case '0': if (s.size() == 1) return false; break;
      default: break;
    }
  }
  throw invalid_input("boolean", text);
}

int16_t parse_int2(std::string_view text) { return parse_integer<int16_t>(text, "smallint"); }
int32_t parse_int4(std::string_view text) { return parse_integer<int32_t>(text, "integer"); }
int64_t parse_int8(std::string_view text) { return parse_integer<int64_t>(text, "bigint"); }
float parse_float4(std::string_view text) { return parse_float<float>(text, "real"); }
double parse_float8(std::string_view text) { return parse_float<double>(text, "double precision"); }

}  // namespace tally::types
