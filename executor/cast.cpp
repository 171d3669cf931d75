#include "executor/cast.hpp"

#include <cfloat>
#include <cmath>
#include <cstdio>

#include "common/error.hpp"
#include "executor/reg_names.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/types/timetz.hpp"
#include "executor/types/type_io.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {
namespace {

constexpr int64_t kUsecsPerDay = 86'400'000'000LL;

int rank(TypeId id) {
  switch (id) {
    case TypeId::int2: return 1;
    case TypeId::int4: return 2;
    case TypeId::int8: return 3;
    case TypeId::numeric: return 4;
    case TypeId::float4: return 5;
    case TypeId::float8: return 6;
    default: return 0;
  }
}

const char* integer_name(TypeId id) {
  return id == TypeId::int2 ? "smallint" : (id == TypeId::int4 ? "integer" : "bigint");
}

}  // namespace

int64_t check_integer_range(__int128 v, TypeId type) {
  __int128 lo = INT64_MIN, hi = INT64_MAX;
  if (type == TypeId::int2) { lo = INT16_MIN; hi = INT16_MAX; }
  if (type == TypeId::int4) { lo = INT32_MIN; hi = INT32_MAX; }
  if (v < lo || v > hi) {
    throw Error(SqlState::numeric_value_out_of_range, std::string(integer_name(type)) + " out of range");
  }
  return static_cast<int64_t>(v);
}

Numeric apply_numeric_typmod(const Numeric& n, SqlType type) {
  if (type.typmod < 4) return n;
  const int precision = type.numeric_precision(), scale = type.numeric_scale();
  const Numeric r = n.rescaled(scale);
  // Digits left of the point must fit precision - scale.
  unsigned __int128 m = r.mantissa < 0 ? -static_cast<unsigned __int128>(r.mantissa)
                                       : static_cast<unsigned __int128>(r.mantissa);
  int digits = 0;
  while (m != 0) { m /= 10; ++digits; }
  if (digits - scale > precision - scale) {
    Error e(SqlState::numeric_value_out_of_range, "numeric field overflow");
    const int left = precision - scale;
    e.with_detail("A field with precision " + std::to_string(precision) + ", scale " + std::to_string(scale) +
                  " must round to an absolute value less than " +
                  (left == 0 ? std::string("1") : "10^" + std::to_string(left)) + ".");
    throw e;
  }
  return r;
}

bool can_cast(TypeId from, TypeId to, CastContext context) {
  if (from == to) return true;
  if (from == TypeId::unknown) return true;
  const int rf = rank(from), rt = rank(to);
  if (rf && rt) {
    if (rt > rf) return true;  // widening numeric casts are implicit
    return context != CastContext::implicit;
  }
  if (is_text_kind(from) && is_text_kind(to)) return true;
  // PostgreSQL: oid -> bigint and int4/int8 -> oid are implicit, oid -> int4 assignment.
  if (from == TypeId::oid && is_integer(to)) return to == TypeId::int8 || context != CastContext::implicit;
  if (is_integer(from) && to == TypeId::oid) return from != TypeId::int2 || context != CastContext::implicit;
  // reg* types are OIDs: to and from oid and the integers as PostgreSQL's
  // pg_cast has it (reg* -> int4/int8 by assignment), text -> regclass implicit.
  if (is_reg_type(to) && (from == TypeId::oid || is_integer(from))) return true;
  if (is_reg_type(from) && to == TypeId::oid) return true;
  if (is_reg_type(from) && is_integer(to)) return to != TypeId::int2 && context != CastContext::implicit;
  if (to == TypeId::regclass && (from == TypeId::text || from == TypeId::varchar)) return true;
  if (from == TypeId::date && (to == TypeId::timestamp || to == TypeId::timestamptz)) return true;
  if (from == TypeId::timestamp && to == TypeId::timestamptz) return true;
  if ((from == TypeId::timestamp || from == TypeId::timestamptz) && to == TypeId::date) {
    return context != CastContext::implicit;
  }
  if (from == TypeId::timestamptz && to == TypeId::timestamp) return context != CastContext::implicit;
  // pg_cast: time -> interval implicit; timestamp(tz) and interval -> time by assignment.
  if (from == TypeId::time && to == TypeId::interval) return true;
  if ((from == TypeId::timestamp || from == TypeId::timestamptz || from == TypeId::interval) && to == TypeId::time) {
    return context != CastContext::implicit;
  }
  // pg_cast: time -> timetz implicit; timestamptz -> timetz and timetz -> time by assignment.
  if (from == TypeId::time && to == TypeId::timetz) return true;
  if ((from == TypeId::timestamptz && to == TypeId::timetz) || (from == TypeId::timetz && to == TypeId::time)) {
    return context != CastContext::implicit;
  }
  if (is_text_kind(to)) return context != CastContext::implicit;
  if (is_text_kind(from)) return context == CastContext::explicit_;
  if ((from == TypeId::boolean && to == TypeId::int4) || (from == TypeId::int4 && to == TypeId::boolean)) {
    return context == CastContext::explicit_;
  }
  return false;
}

Value cast_value(const Value& value, SqlType from, SqlType to, bool explicit_cast) {
  if (is_null(value)) return value;
  if (from == to) return value;
  const TypeId f = from.id, t = to.id;
  // Text targets: the source's output function (bool::text is "true"/"false").
  if (is_text_kind(t) && t != TypeId::unknown) {
    std::string text;
    if (f == TypeId::boolean) text = std::get<bool>(value) ? "true" : "false";
    else if (is_text_kind(f)) text = std::get<std::string>(value);
    else text = value_to_text(from, value);
    if (f == TypeId::bpchar && t != TypeId::bpchar) {
      while (!text.empty() && text.back() == ' ') text.pop_back();  // char(n) -> text drops padding
    }
    const int n = to.char_length();
    if (n >= 0 && (t == TypeId::varchar || t == TypeId::bpchar)) {
      // Length in characters (UTF-8).
      size_t chars = 0, cut = text.size();
      for (size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
          if (chars == static_cast<size_t>(n)) { cut = i; break; }
          ++chars;
        }
      }
      if (cut < text.size()) {
        const bool only_spaces = text.find_first_not_of(' ', cut) == std::string::npos;
        if (!explicit_cast && !only_spaces) {
          throw Error(SqlState::string_data_right_truncation,
                      std::string("value too long for type ") +
                          (t == TypeId::varchar ? "character varying(" : "character(") + std::to_string(n) + ")");
        }
        text.resize(cut);
        chars = static_cast<size_t>(n);
      }
      if (t == TypeId::bpchar) text.append(static_cast<size_t>(n) - chars, ' ');
    }
    return text;
  }
  if (is_text_kind(f)) return parse_text(to, std::get<std::string>(value));

  if (is_reg_type(f) && (t == TypeId::oid || is_reg_type(t))) return value;
  if (f == TypeId::oid && is_reg_type(t)) return value;
  if ((t == TypeId::oid || is_reg_type(t)) && is_integer(f)) {
    // int4 reinterprets as unsigned (-1 is 4294967295); int8 must fit.
    const int64_t v = std::get<int64_t>(value);
    if (f != TypeId::int8 && v < 0) return v + 4294967296LL;
    if (v < 0 || v > 4294967295LL) throw Error(SqlState::numeric_value_out_of_range, "OID out of range");
    return v;
  }
  if (is_integer(t)) {
    if (is_integer(f) || f == TypeId::oid || is_reg_type(f)) return check_integer_range(std::get<int64_t>(value), t);
    if (f == TypeId::boolean) return static_cast<int64_t>(std::get<bool>(value) ? 1 : 0);
    if (is_float(f)) {
      const double d = std::get<double>(value);
      const double r = std::rint(d);  // PostgreSQL rounds half to even here
      if (std::isnan(d) || r < -9.2233720368547758e18 || r >= 9.2233720368547758e18) {
        throw Error(SqlState::numeric_value_out_of_range, std::string(integer_name(t)) + " out of range");
      }
      return check_integer_range(static_cast<__int128>(static_cast<int64_t>(r)), t);
    }
    if (f == TypeId::numeric) {
      const Numeric n = std::get<Numeric>(value).rescaled(0);
      if (n.mantissa > INT64_MAX || n.mantissa < INT64_MIN) {
        throw Error(SqlState::numeric_value_out_of_range, std::string(integer_name(t)) + " out of range");
      }
      return check_integer_range(n.mantissa, t);
    }
  }
  if (is_float(t)) {
    double d = 0;
    if (is_integer(f)) d = static_cast<double>(std::get<int64_t>(value));
    else if (is_float(f)) d = std::get<double>(value);
    else if (f == TypeId::numeric) d = std::get<Numeric>(value).to_double();
    else throw Error(SqlState::cannot_coerce, "cannot cast type " + format_type(from) + " to " + format_type(to));
    if (t == TypeId::float4) {
      const float x = static_cast<float>(d);
      if (std::isinf(x) && !std::isinf(d)) throw Error(SqlState::numeric_value_out_of_range, "value out of range: overflow");
      if (x == 0 && d != 0) throw Error(SqlState::numeric_value_out_of_range, "value out of range: underflow");
      return static_cast<double>(x);
    }
    return d;
  }
  if (t == TypeId::numeric) {
    Numeric n;
    if (is_integer(f)) n = Numeric::from_int(std::get<int64_t>(value));
    else if (f == TypeId::float8) n = Numeric::from_double(std::get<double>(value));
    else if (f == TypeId::float4) {
      // float4 -> numeric prints FLT_DIG (6) significant digits.
      const double d = std::get<double>(value);
      if (std::isnan(d) || std::isinf(d)) return Numeric::from_double(d);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.*g", FLT_DIG, d);
      n = Numeric::parse(buf);
    } else if (f == TypeId::numeric) n = std::get<Numeric>(value);
    else throw Error(SqlState::cannot_coerce, "cannot cast type " + format_type(from) + " to " + format_type(to));
    return apply_numeric_typmod(n, to);
  }
  if (t == TypeId::boolean && f == TypeId::int4) return std::get<int64_t>(value) != 0;
  // A timestamp (or date) is a local time in the session's TimeZone, a
  // timestamptz an instant: casts between them go through the zone.
  const types::TimeZone& zone = types::current_time_zone();
  if (t == TypeId::timestamp || t == TypeId::timestamptz) {
    if (f == TypeId::date) {
      const int64_t d = std::get<int64_t>(value);
      if (d == INT32_MIN) return INT64_MIN;
      if (d == INT32_MAX) return INT64_MAX;
      return t == TypeId::timestamptz ? zone.to_utc(d * kUsecsPerDay) : d * kUsecsPerDay;
    }
    if (f == TypeId::timestamp && t == TypeId::timestamptz) return zone.to_utc(std::get<int64_t>(value));
    if (f == TypeId::timestamptz && t == TypeId::timestamp) return zone.to_local(std::get<int64_t>(value));
    if (f == TypeId::timestamp || f == TypeId::timestamptz) return value;
  }
  if (t == TypeId::date && (f == TypeId::timestamp || f == TypeId::timestamptz)) {
    const int64_t ts = f == TypeId::timestamptz ? zone.to_local(std::get<int64_t>(value)) : std::get<int64_t>(value);
    if (ts == INT64_MIN) return static_cast<int64_t>(INT32_MIN);
    if (ts == INT64_MAX) return static_cast<int64_t>(INT32_MAX);
    int64_t days = ts / kUsecsPerDay;
    if (ts % kUsecsPerDay < 0) --days;
    return days;
  }
  if (t == TypeId::interval && f == TypeId::interval) {
    return types::apply_interval_typmod(std::get<Interval>(value), to.typmod);
  }
  if (t == TypeId::time) {
    if (f == TypeId::time) return types::round_time(std::get<int64_t>(value), to.typmod);
    if (f == TypeId::timestamp || f == TypeId::timestamptz) {
      // timestamp_time: the time of day (local for timestamptz); none for infinity.
      int64_t ts = std::get<int64_t>(value);
      if (ts == INT64_MIN || ts == INT64_MAX) return Null{};
      if (f == TypeId::timestamptz) ts = zone.to_local(ts);
      int64_t micros = ts % kUsecsPerDay;
      if (micros < 0) micros += kUsecsPerDay;
      return types::round_time(micros, to.typmod);
    }
    if (f == TypeId::interval) {
      // interval_time: the interval's time part modulo a day; months and days drop.
      int64_t micros = std::get<Interval>(value).micros % kUsecsPerDay;
      if (micros < 0) micros += kUsecsPerDay;
      return types::round_time(micros, to.typmod);
    }
  }
  if (t == TypeId::time && f == TypeId::timetz) {
    return types::round_time(types::timetz_time(std::get<int64_t>(value)), to.typmod);
  }
  if (t == TypeId::timetz) {
    if (f == TypeId::timetz) return types::round_timetz(std::get<int64_t>(value), to.typmod);
    if (f == TypeId::time) return types::time_to_timetz(types::round_time(std::get<int64_t>(value), to.typmod));
    if (f == TypeId::timestamptz) {
      const int64_t ts = std::get<int64_t>(value);
      // timestamptz_timetz: an infinite timestamp has no time of day.
      if (ts == INT64_MIN || ts == INT64_MAX) return Null{};
      return types::round_timetz(types::timestamptz_to_timetz(ts), to.typmod);
    }
  }
  if (t == TypeId::interval && f == TypeId::time) {
    return types::apply_interval_typmod(Interval{0, 0, std::get<int64_t>(value)}, to.typmod);
  }
  throw Error(SqlState::cannot_coerce, "cannot cast type " + format_type(from) + " to " + format_type(to));
}

}  // namespace tally::executor
