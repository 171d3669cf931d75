#include "executor/value_codec.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "common/error.hpp"
#include "executor/array_text.hpp"
#include "executor/reg_names.hpp"
#include "executor/types/interval_io.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/types/timetz.hpp"
#include "executor/types/type_io.hpp"

namespace tally::executor {
namespace {

constexpr int64_t kUsecsPerDay = 86'400'000'000LL;
constexpr int32_t kDateNegInfinity = INT32_MIN;
constexpr int32_t kDatePosInfinity = INT32_MAX;

void append_padded(std::string& out, int64_t v, int width) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  for (int n = static_cast<int>(end - buf); n < width; ++n) out.push_back('0');
  out.append(buf, end);
}

void append_int64(std::string& out, int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

template <class T>
void put_be(std::string& out, T v) {
  using U = std::make_unsigned_t<T>;
  U u = static_cast<U>(v);
  char buf[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) buf[i] = static_cast<char>(u >> (8 * (sizeof(T) - 1 - i)));
  out.append(buf, sizeof(T));
}

template <class T>
T get_be(std::string_view bytes) {
  using U = std::make_unsigned_t<T>;
  U u = 0;
  for (size_t i = 0; i < sizeof(T); ++i) u = static_cast<U>((u << 8) | static_cast<uint8_t>(bytes[i]));
  return static_cast<T>(u);
}

void append_numeric_binary(std::string& out, const Numeric& n) {
  if (n.is_infinite()) {  // NUMERIC_PINF / NUMERIC_NINF: no digits
    put_be<int16_t>(out, 0);
    put_be<int16_t>(out, 0);
    put_be<uint16_t>(out, n.mantissa < 0 ? 0xF000 : 0xD000);
    put_be<int16_t>(out, 0);
    return;
  }
  // Base-10000 digits aligned at the decimal point, leading/trailing zero groups stripped.
  unsigned __int128 m = n.mantissa < 0 ? -static_cast<unsigned __int128>(n.mantissa)
                                       : static_cast<unsigned __int128>(n.mantissa);
  std::string dec;
  while (m != 0) { dec.push_back(static_cast<char>('0' + static_cast<int>(m % 10))); m /= 10; }
  // dec is little-endian decimal digits; digit k has decimal exponent k - scale.
  const int scale = n.scale;
  const int frac_pad = (4 - scale % 4) % 4;  // pad the fraction to whole groups
  std::string padded(static_cast<size_t>(frac_pad), '0');
  padded += dec;  // now digit k has exponent k - scale - frac_pad, a multiple of 4 at k=0
  const int low_exp = -(scale + frac_pad);  // exponent of padded[0]
  while (padded.size() % 4 != 0) padded.push_back('0');
  std::vector<int16_t> groups;  // most significant first
  for (size_t k = padded.size(); k >= 4; k -= 4) {
    int g = 0;
    for (size_t j = 0; j < 4; ++j) g = g * 10 + (padded[k - 1 - j] - '0');
    groups.push_back(static_cast<int16_t>(g));
  }
  int weight = (low_exp / 4) + static_cast<int>(groups.size()) - 1;
  size_t first = 0;
  while (first < groups.size() && groups[first] == 0) { ++first; --weight; }
  size_t last = groups.size();
  while (last > first && groups[last - 1] == 0) --last;
  const int ndigits = static_cast<int>(last - first);
  if (ndigits == 0) weight = 0;
  put_be<int16_t>(out, static_cast<int16_t>(ndigits));
  put_be<int16_t>(out, static_cast<int16_t>(weight));
  put_be<uint16_t>(out, n.mantissa < 0 ? 0x4000 : 0x0000);
  put_be<int16_t>(out, static_cast<int16_t>(scale));
  for (size_t i = first; i < last; ++i) put_be<int16_t>(out, groups[i]);
}

Error bad_input(std::string_view type_name, std::string_view text) {
  return Error(SqlState::invalid_text_representation,
               "invalid input syntax for type " + std::string(type_name) + ": \"" + std::string(text) + "\"");
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

int64_t parse_integer(std::string_view text, TypeId id) {
  const char* name = id == TypeId::int2 ? "smallint" : (id == TypeId::int4 ? "integer" : "bigint");
  std::string_view s = trim(text);
  bool negative = false;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) throw bad_input(name, text);
  unsigned __int128 v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '_' ) throw bad_input(name, text);
    if (s[i] < '0' || s[i] > '9') throw bad_input(name, text);
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
    if (v > (static_cast<unsigned __int128>(1) << 64)) break;
  }
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') throw bad_input(name, text);
  }
  const __int128 signed_v = negative ? -static_cast<__int128>(v) : static_cast<__int128>(v);
  __int128 lo = INT64_MIN, hi = INT64_MAX;
  if (id == TypeId::int2) { lo = INT16_MIN; hi = INT16_MAX; }
  if (id == TypeId::int4) { lo = INT32_MIN; hi = INT32_MAX; }
  if (v > (static_cast<unsigned __int128>(1) << 64) || signed_v < lo || signed_v > hi) {
    throw Error(SqlState::numeric_value_out_of_range,
                "value \"" + std::string(text) + "\" is out of range for type " + name);
  }
  return static_cast<int64_t>(signed_v);
}

// "char" is one byte, held in the text charout prints: the byte itself,
// '' for 0, \ooo (octal) for a byte above 127.
std::string char_text(unsigned char byte) {
  if (byte == 0) return {};
  if (byte < 128) return std::string(1, static_cast<char>(byte));
  char out[5];
  std::snprintf(out, sizeof out, "\\%03o", byte);
  return out;
}

// charin: \ooo is that byte, anything else its first byte ('' is 0).
unsigned char char_byte(std::string_view text) {
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  if (text.size() == 4 && text[0] == '\\' && octal(text[1]) && octal(text[2]) && octal(text[3]))
    return static_cast<unsigned char>(((text[1] - '0') << 6) | ((text[2] - '0') << 3) | (text[3] - '0'));
  return text.empty() ? 0 : static_cast<unsigned char>(text[0]);
}

}  // namespace

// The calendar arithmetic is PostgreSQL's date2j/j2date, kept once in executor/types.
int32_t days_from_civil(int year, int month, int day) { return types::date_from_ymd(year, month, day); }

void civil_from_days(int32_t days, int& year, int& month, int& day) {
  types::ymd_from_date(days, year, month, day);
}

void append_float(std::string& out, double value, bool is_float4) {
  if (std::isnan(value)) { out += "NaN"; return; }
  if (std::isinf(value)) { out += value > 0 ? "Infinity" : "-Infinity"; return; }
  if (value == 0) { out += std::signbit(value) ? "-0" : "0"; return; }
  char buf[64];
  char* end;
  if (is_float4) {
    end = std::to_chars(buf, buf + sizeof buf, static_cast<float>(value), std::chars_format::scientific).ptr;
  } else {
    end = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific).ptr;
  }
  // buf: [-]d[.ddd]e(+|-)XX
  std::string_view s(buf, static_cast<size_t>(end - buf));
  const bool negative = s[0] == '-';
  if (negative) s.remove_prefix(1);
  const size_t e_pos = s.find('e');
  char digits[32];
  int olength = 0;
  for (size_t i = 0; i < e_pos; ++i) {
    if (s[i] != '.') digits[olength++] = s[i];
  }
  int exponent = 0;
  std::from_chars(s.data() + e_pos + (s[e_pos + 1] == '+' ? 2 : 1), s.data() + s.size(), exponent);
  if (negative) out.push_back('-');
  // PostgreSQL (ryu's d2s/f2s as patched there) prints fixed-point when
  // -4 <= exponent < 15 (float8) / 6 (float4), like printf's %g.
  const int fixed_limit = is_float4 ? 6 : 15;
  if (exponent >= -4 && exponent < fixed_limit) {
    if (exponent >= 0) {
      if (olength <= exponent + 1) {
        out.append(digits, static_cast<size_t>(olength));
        out.append(static_cast<size_t>(exponent + 1 - olength), '0');
      } else {
        out.append(digits, static_cast<size_t>(exponent + 1));
        out.push_back('.');
        out.append(digits + exponent + 1, static_cast<size_t>(olength - exponent - 1));
      }
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exponent - 1), '0');
      out.append(digits, static_cast<size_t>(olength));
    }
    return;
  }
  out.push_back(digits[0]);
  if (olength > 1) {
    out.push_back('.');
    out.append(digits + 1, static_cast<size_t>(olength - 1));
  }
  out.push_back('e');
  out.push_back(exponent < 0 ? '-' : '+');
  append_padded(out, exponent < 0 ? -exponent : exponent, 2);
}

void append_text(std::string& out, const Vector& v, size_t i) {
  switch (v.type.id) {
    case TypeId::boolean: out.push_back(v.ints[i] ? 't' : 'f'); return;
    // The storage engineer's PostgreSQL-exact output functions (executor/types/).
    case TypeId::float4: types::append_float4(out, static_cast<float>(v.floats[i])); return;
    case TypeId::float8: types::append_float8(out, v.floats[i]); return;
    case TypeId::date: types::append_date(out, static_cast<int32_t>(v.ints[i])); return;
    case TypeId::timestamp: types::append_timestamp(out, v.ints[i]); return;
    case TypeId::interval: types::append_interval(out, v.intervals[i]); return;
    case TypeId::numeric:
      // An AvgParts column (value.hpp) has no Numerics: its value is computed.
      if (v.avg_parts) std::get<Numeric>(v.get(i)).append_to(out);
      else v.numerics[i].append_to(out);
      return;
    case TypeId::timestamptz: types::append_timestamptz(out, v.ints[i]); return;
    case TypeId::time: types::append_time(out, v.ints[i]); return;
    case TypeId::timetz: types::append_timetz(out, v.ints[i]); return;
    case TypeId::bytea: types::append_bytea_out(out, v.text_at(i)); return;
    case TypeId::regclass:
    case TypeId::regtype:
    case TypeId::regnamespace:
    case TypeId::regproc:
    case TypeId::regoper:
    case TypeId::regprocedure:
    case TypeId::regoperator: out += reg_output(v.type.id, v.ints[i]); return;
    default: break;
  }
  if (physical_of(v.type.id) == Physical::text) { out += v.text_at(i); return; }
  append_int64(out, v.ints[i]);
}

void append_value_text(std::string& out, SqlType type, const Value& value) {
  Vector one(type);
  one.push(value);
  append_text(out, one, 0);
}

std::string value_to_text(SqlType type, const Value& value) {
  std::string out;
  append_value_text(out, type, value);
  return out;
}

void append_binary(std::string& out, const Vector& v, size_t i) {
  switch (v.type.id) {
    case TypeId::boolean: out.push_back(v.ints[i] ? 1 : 0); return;
    case TypeId::char_: out.push_back(static_cast<char>(char_byte(v.text_at(i)))); return;
    case TypeId::int2: put_be<int16_t>(out, static_cast<int16_t>(v.ints[i])); return;
    case TypeId::int4:
    case TypeId::date: put_be<int32_t>(out, static_cast<int32_t>(v.ints[i])); return;
    case TypeId::oid:
    case TypeId::regclass:
    case TypeId::regtype:
    case TypeId::regnamespace:
    case TypeId::regproc:
    case TypeId::regoper:
    case TypeId::regprocedure:
    case TypeId::regoperator: put_be<uint32_t>(out, static_cast<uint32_t>(v.ints[i])); return;
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::time: put_be<int64_t>(out, v.ints[i]); return;
    case TypeId::timetz: types::send_timetz(out, v.ints[i]); return;
    case TypeId::float4: {
      const float f = static_cast<float>(v.floats[i]);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      put_be<uint32_t>(out, bits);
      return;
    }
    case TypeId::float8: {
      uint64_t bits;
      std::memcpy(&bits, &v.floats[i], sizeof bits);
      put_be<uint64_t>(out, bits);
      return;
    }
    case TypeId::interval: types::send_interval(out, v.intervals[i]); return;
    case TypeId::numeric:
      append_numeric_binary(out, v.avg_parts ? std::get<Numeric>(v.get(i)) : v.numerics[i]);
      return;
    case TypeId::record:
      // record_send names each field's type OID: Tally keeps records as text only.
      throw Error(SqlState::feature_not_supported, "binary output of type record is not supported");
    default: break;
  }
  if (physical_of(v.type.id) == Physical::text) { out += v.text_at(i); return; }
  put_be<int64_t>(out, v.ints[i]);
}

Value parse_text(SqlType type, std::string_view text) {
  // PostgreSQL-exact input functions and messages (executor/types/).
  switch (type.id) {
    case TypeId::boolean: return types::parse_bool(text);
    case TypeId::int2: return static_cast<int64_t>(types::parse_int2(text));
    case TypeId::int4: return static_cast<int64_t>(types::parse_int4(text));
    case TypeId::int8: return types::parse_int8(text);
    case TypeId::float4: return static_cast<double>(types::parse_float4(text));
    case TypeId::float8: return types::parse_float8(text);
    case TypeId::date: return static_cast<int64_t>(types::parse_date(text));
    case TypeId::timestamp: return types::parse_timestamp(text);
    case TypeId::timestamptz: return types::parse_timestamptz(text);
    case TypeId::time: return types::parse_time(text, type.typmod);
    case TypeId::timetz: return types::parse_timetz(text, type.typmod);
    case TypeId::bytea: return types::parse_bytea(text);
    case TypeId::interval: return types::parse_interval(text, type.typmod);
    case TypeId::oid: return parse_integer(text, TypeId::int8);
    case TypeId::regclass:
    case TypeId::regtype:
    case TypeId::regnamespace:
    case TypeId::regproc:
    case TypeId::regoper:
    case TypeId::regprocedure:
    case TypeId::regoperator: return reg_input(type.id, text);
    case TypeId::numeric: {
      Numeric n = Numeric::parse(text);
      if (type.typmod >= 4) n = n.rescaled(type.numeric_scale());
      return n;
    }
    case TypeId::record:
      throw Error(SqlState::feature_not_supported, "input of anonymous composite types is not implemented");
    case TypeId::void_: return std::string();  // void_in takes any text
    case TypeId::char_: return char_text(char_byte(text));
    // Held in its text form, as array_out prints it ('{ a , b }' is {a,b}).
    case TypeId::text_array:
    case TypeId::name_array:
      return array_literal(array_elements(TypeId::text_array, text), array_lower_bound(TypeId::text_array, text));
    case TypeId::oid_array:
    case TypeId::int2_array: {
      auto elements = array_elements(type.id, text);
      // Each element as its type's input reads it (22P02 for one that is no number).
      const SqlType element{array_element_type(type.id)};
      for (auto& e : elements) {
        if (e) e = std::to_string(std::get<int64_t>(parse_text(element, *e)));
      }
      return array_literal(elements, array_lower_bound(type.id, text));
    }
    default: return std::string(text);
  }
}

Value parse_binary(SqlType type, std::string_view bytes) {
  auto need = [&](size_t n) {
    // PostgreSQL's recv functions read with pq_getmsg*: too few bytes is
    // 08P01, bytes left over 22P03.
    if (bytes.size() < n) throw Error(SqlState::protocol_violation, "insufficient data left in message");
    if (bytes.size() > n) {
      throw Error(SqlState::invalid_binary_representation, "incorrect binary data format in bind parameter");
    }
  };
  switch (type.id) {
    case TypeId::boolean: need(1); return bytes[0] != 0;
    case TypeId::int2: need(2); return static_cast<int64_t>(get_be<int16_t>(bytes));
    case TypeId::int4:
    case TypeId::date: need(4); return static_cast<int64_t>(get_be<int32_t>(bytes));
    case TypeId::oid:
    case TypeId::regclass:
    case TypeId::regtype:
    case TypeId::regnamespace:
    case TypeId::regproc:
    case TypeId::regoper:
    case TypeId::regprocedure:
    case TypeId::regoperator: need(4); return static_cast<int64_t>(get_be<uint32_t>(bytes));
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz: need(8); return get_be<int64_t>(bytes);
    case TypeId::char_: need(1); return char_text(static_cast<unsigned char>(bytes[0]));
    case TypeId::time: need(8); return types::recv_time(bytes, type.typmod);
    case TypeId::timetz: need(12); return types::recv_timetz(bytes, type.typmod);
    case TypeId::interval: return types::recv_interval(bytes);
    case TypeId::float4: {
      need(4);
      const uint32_t bits = get_be<uint32_t>(bytes);
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return static_cast<double>(f);
    }
    case TypeId::float8: {
      need(8);
      const uint64_t bits = get_be<uint64_t>(bytes);
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    case TypeId::numeric: {
      if (bytes.size() < 8) need(8);
      const int ndigits = get_be<int16_t>(bytes.substr(0, 2));
      const int weight = get_be<int16_t>(bytes.substr(2, 2));
      const uint16_t sign = get_be<uint16_t>(bytes.substr(4, 2));
      const int dscale = get_be<int16_t>(bytes.substr(6, 2));
      if (ndigits < 0 || bytes.size() != 8 + 2 * static_cast<size_t>(ndigits) ||
          (sign != 0 && sign != 0x4000) || dscale < 0) {
        if (sign == 0xC000) throw Error(SqlState::feature_not_supported, "numeric NaN is not supported");
        throw Error(SqlState::invalid_binary_representation, "invalid numeric in binary parameter");
      }
      std::string text = sign == 0x4000 ? "-" : "";
      text += "0";
      // Build "digits e exponent" from base-10000 groups.
      std::string digits;
      for (int i = 0; i < ndigits; ++i) {
        const int g = get_be<int16_t>(bytes.substr(8 + 2 * static_cast<size_t>(i), 2));
        if (g < 0 || g > 9999) throw Error(SqlState::invalid_binary_representation, "invalid digit in external \"numeric\" value");
        char buf[8];
        std::snprintf(buf, sizeof buf, "%04d", g);
        digits += buf;
      }
      text += digits + "e" + std::to_string(4 * (weight - ndigits + 1));
      Numeric n = Numeric::parse(text);
      return n.rescaled(dscale);
    }
    default: return std::string(bytes);
  }
}

}  // namespace tally::executor
