// Date and time functions: date_trunc, date_bin, date_part and extract over
// timestamps (PostgreSQL 15's field names and result scales).
#include <cmath>
#include <cstdio>
#include <string>
#include <strings.h>

#include "common/ascii_case.hpp"
#include "common/column_program.hpp"
#include "common/error.hpp"
#include "executor/cast.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/types/time_zone.hpp"
#include "executor/types/type_io.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::scalar {

namespace {

int64_t ts_of(const Value& v) { return std::get<int64_t>(v); }

void split_timestamp(int64_t ts, int& y, int& m, int& d, int64_t& time_of_day) {
  int64_t days = ts / kUsecsPerDay;
  time_of_day = ts % kUsecsPerDay;
  if (time_of_day < 0) { time_of_day += kUsecsPerDay; --days; }
  civil_from_days(static_cast<int32_t>(days), y, m, d);
}

int64_t truncate_timestamp(const std::string& field_in, int64_t ts) {
  if (ts == INT64_MIN || ts == INT64_MAX) return ts;
  const std::string field = utf8_lower(field_in);
  int y, m, d;
  int64_t tod;
  split_timestamp(ts, y, m, d, tod);
  auto at = [](int year, int month, int day) { return static_cast<int64_t>(days_from_civil(year, month, day)) * kUsecsPerDay; };
  if (field == "microseconds") return ts;
  if (field == "milliseconds") return ts - ((ts % 1000) + 1000) % 1000;
  if (field == "second") return at(y, m, d) + tod / 1'000'000 * 1'000'000;
  if (field == "minute") return at(y, m, d) + tod / kUsecsPerMinute * kUsecsPerMinute;
  if (field == "hour") return at(y, m, d) + tod / kUsecsPerHour * kUsecsPerHour;
  if (field == "day") return at(y, m, d);
  if (field == "week") {
    const int64_t days = days_from_civil(y, m, d);
    // 2000-01-01 was a Saturday; ISO weeks start on Monday.
    int64_t dow = ((days + 5) % 7 + 7) % 7;  // 0 = Monday
    return (days - dow) * kUsecsPerDay;
  }
  if (field == "month") return at(y, m, 1);
  if (field == "quarter") return at(y, (m - 1) / 3 * 3 + 1, 1);
  if (field == "year") return at(y, 1, 1);
  if (field == "decade") return at(y >= 0 ? y / 10 * 10 : -((9 - y) / 10 * 10), 1, 1);
  if (field == "century") return at(y > 0 ? (y - 1) / 100 * 100 + 1 : -((99 - (y - 1)) / 100 * 100) + 1, 1, 1);
  if (field == "millennium") return at(y > 0 ? (y - 1) / 1000 * 1000 + 1 : -((999 - (y - 1)) / 1000 * 1000) + 1, 1, 1);
  throw Error(SqlState::feature_not_supported, "unit \"" + field_in + "\" not supported for type timestamp without time zone");
}

// extract/date_part of an infinite date or timestamp: the fields that grow
// without bound are ±Infinity, the others NULL (PostgreSQL 15).
Value extract_infinite(const std::string& field_in, int64_t ts, bool numeric_result) {
  const std::string field = utf8_lower(field_in);
  static const char* const unbounded[] = {"year", "years", "decade", "decades", "century", "centuries",
                                          "millennium", "millennia", "julian", "isoyear", "epoch"};
  for (const char* f : unbounded) {
    if (field == f) {
      const bool negative = ts == INT64_MIN;
      if (numeric_result) return Numeric::infinity(negative);
      return negative ? -HUGE_VAL : HUGE_VAL;
    }
  }
  return Null{};
}

// extract/date_part: the value as a numeric with PostgreSQL 15's scale.
Numeric extract_field(const std::string& field_in, int64_t ts, bool is_date) {
  const std::string field = utf8_lower(field_in);
  int y, m, d;
  int64_t tod;
  split_timestamp(ts, y, m, d, tod);
  const int64_t days = days_from_civil(y, m, d);
  auto whole = [](int64_t v) { return Numeric::from_int(v); };
  if (field == "year" || field == "years") return whole(y > 0 ? y : y - 1);
  if (field == "month" || field == "mon" || field == "months") return whole(m);
  if (field == "day" || field == "days") return whole(d);
  if (field == "quarter") return whole((m - 1) / 3 + 1);
  if (field == "dow") return whole(((days + 6) % 7 + 7) % 7);
  if (field == "isodow") { const int64_t dow = ((days + 6) % 7 + 7) % 7; return whole(dow == 0 ? 7 : dow); }
  if (field == "doy") return whole(days - days_from_civil(y, 1, 1) + 1);
  if (field == "decade") return whole(y >= 0 ? y / 10 : -((8 - (y - 1)) / 10));
  if (field == "century") return whole(y > 0 ? (y + 99) / 100 : -((99 - (y - 1)) / 100));
  if (field == "millennium") return whole(y > 0 ? (y + 999) / 1000 : -((999 - (y - 1)) / 1000));
  if (field == "week" || field == "isoyear") {
    // ISO 8601 week: the week with the year's first Thursday is week 1.
    auto iso_week_start = [](int year) {
      const int64_t jan4 = days_from_civil(year, 1, 4);
      const int64_t dow = ((jan4 + 5) % 7 + 7) % 7;  // 0 = Monday
      return jan4 - dow;
    };
    int iso_year = y;
    int64_t start = iso_week_start(y);
    if (days < start) start = iso_week_start(--iso_year);
    else if (days >= iso_week_start(y + 1)) start = iso_week_start(++iso_year);
    if (field == "isoyear") return whole(iso_year > 0 ? iso_year : iso_year - 1);
    return whole((days - start) / 7 + 1);
  }
  if (field == "epoch") {
    const __int128 micros = static_cast<__int128>(ts) + static_cast<__int128>(946684800) * 1'000'000;
    if (is_date) return {micros / 1'000'000, 0};
    return {micros, 6};
  }
  if (is_date) {
    throw Error(SqlState::feature_not_supported, "unit \"" + field_in + "\" not supported for type date");
  }
  if (field == "hour" || field == "hours") return whole(tod / kUsecsPerHour);
  if (field == "minute" || field == "minutes") return whole(tod / kUsecsPerMinute % 60);
  if (field == "second" || field == "seconds") return {tod % kUsecsPerMinute, 6};
  if (field == "milliseconds") return {tod % kUsecsPerMinute, 3};
  if (field == "microseconds") return {tod % kUsecsPerMinute, 0};
  throw Error(SqlState::feature_not_supported, "unit \"" + field_in + "\" not supported for type timestamp");
}

// The binder's date -> timestamp under extract, a Vector at a time
// (cast_value's rule: an infinite date stays infinite); a date past the
// timestamps' range goes row by row.
bool dates_as_timestamps(std::span<const Vector* const> args, size_t rows, Vector& out) {
  constexpr int64_t kTimestampDays = int64_t{1} << 27;  // over 294,276 AD, PostgreSQL's last timestamp
  const Vector& days = *args[0];
  if (days.ints.size() < rows) return false;
  out.ints.resize(rows);
  for (size_t r = 0; r < rows; ++r) {
    const int64_t d = days.ints[r];
    if (d == INT32_MIN || d == INT32_MAX) out.ints[r] = d == INT32_MIN ? INT64_MIN : INT64_MAX;
    else if (d > -kTimestampDays && d < kTimestampDays) out.ints[r] = d * kUsecsPerDay;
    else if (!days.null_at(r)) return false;
  }
  if (!days.nulls.empty()) out.nulls.assign(days.nulls.begin(), days.nulls.begin() + static_cast<std::ptrdiff_t>(rows));
  out.count = rows;
  return true;
}

// extract / date_part of a constant whole-number field (year, or a
// DateField) of a timestamp's microseconds, a Vector at a time, with the
// column programs' arithmetic (ProgramOp::year_of, date_field): a join's
// rows grouped by extract(year from o_orderdate) are not turned into Values
// and back, nor the unit lowered, row by row. Any other unit, a unit that
// is not one constant, an infinite value, and a date's hour or minute (an
// error) go row by row.
VectorKernel whole_fields(bool numeric_result, bool date_unit_rules) {
  return [numeric_result, date_unit_rules](std::span<const Vector* const> args, size_t rows, Vector& out) -> bool {
    const Vector& unit = *args[0];
    const Vector& value = *args[1];
    if (unit.size() != 1 || unit.null_at(0) || value.ints.size() < rows) return false;
    const std::string name = ascii_lower(unit.text_at(0));
    const std::optional<ProgramStep> step = extract_step(name, 1);  // of microseconds
    if (!step || (date_unit_rules && (name == "hour" || name == "minute"))) return false;
    if (numeric_result) out.numerics.resize(rows);
    else out.floats.resize(rows);
    uint32_t error = 0;
    for (size_t r = 0; r < rows; ++r) {
      if (value.null_at(r)) continue;
      ProgramSlot slot{value.ints[r], 0, false};
      if (step->op == ProgramOp::year_of) program_detail::year_of_slot(step->arg, slot, &error);
      else program_detail::date_field_slot(step->arg, slot, &error);
      if (error != 0) return false;
      const auto v = static_cast<int64_t>(slot.i);
      if (numeric_result) out.numerics[r] = Numeric::from_int(v);
      else out.floats[r] = static_cast<double>(v);
    }
    if (!value.nulls.empty()) out.nulls.assign(value.nulls.begin(), value.nulls.begin() + static_cast<std::ptrdiff_t>(rows));
    out.count = rows;
    return true;
  };
}

}  // namespace

ExprPtr make_datetime_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context) {
  const size_t n = args.size();
  auto type_of = [&](size_t i) { return args[i]->type; };
  if (name == "date_bin" && n == 3) {
    // date_bin(stride, ts, origin): the start of ts's stride-long bin counted
    // from origin, rounding down before the origin as after it, as
    // PostgreSQL 15's timestamp_bin does. timestamptz bins the instant.
    args[0] = to_type(std::move(args[0]), TypeId::interval, context);
    TypeId t = TypeId::timestamp;
    for (size_t i = 1; i < 3; ++i) {
      if (type_of(i).id == TypeId::timestamptz || type_of(i).id == TypeId::date) t = TypeId::timestamptz;
      else if (type_of(i).id != TypeId::timestamp && type_of(i).id != TypeId::unknown) throw no_function(name, args);
    }
    for (size_t i = 1; i < 3; ++i) args[i] = to_type(std::move(args[i]), t, context);
    return call({t}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const auto& stride = std::get<Interval>(a[0]);
      const int64_t ts = ts_of(a[1]), origin = ts_of(a[2]);
      if (ts == types::timestamp_pos_infinity || ts == types::timestamp_neg_infinity) return ts;
      if (origin == types::timestamp_pos_infinity || origin == types::timestamp_neg_infinity)
        throw Error(SqlState::datetime_field_overflow, "origin out of range");
      if (stride.months != 0)
        throw Error(SqlState::feature_not_supported,
                    "timestamps cannot be binned into intervals containing months or years");
      const __int128 stride_usecs = static_cast<__int128>(stride.days) * kUsecsPerDay + stride.micros;
      if (stride_usecs <= 0) throw Error(SqlState::datetime_field_overflow, "stride must be greater than zero");
      const __int128 diff = static_cast<__int128>(ts) - origin;
      const __int128 remainder = diff % stride_usecs;
      const __int128 delta = diff - remainder - (remainder < 0 ? stride_usecs : 0);
      const __int128 result = origin + delta;
      if (diff > INT64_MAX || diff < INT64_MIN || result >= types::timestamp_pos_infinity ||
          result <= types::timestamp_neg_infinity)
        throw Error(SqlState::datetime_field_overflow, "timestamp out of range");
      return static_cast<int64_t>(result);
    });
  }
  if (name == "date_trunc" && n == 2) {
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    if (type_of(1).id == TypeId::unknown) args[1] = to_type(std::move(args[1]), TypeId::timestamptz, context);
    if (type_of(1).id == TypeId::date) args[1] = to_type(std::move(args[1]), TypeId::timestamptz, context);
    const TypeId t = type_of(1).id;
    if (t != TypeId::timestamp && t != TypeId::timestamptz) throw no_function(name, args);
    if (t == TypeId::timestamptz) {
      // Truncated in the session's zone, as PostgreSQL's timestamptz_trunc does.
      return call({t}, name, std::move(args), [](std::span<const Value> a) -> Value {
        const types::TimeZone& zone = types::current_time_zone();
        const Value local = truncate_timestamp(std::get<std::string>(a[0]), zone.to_local(ts_of(a[1])));
        return is_null(local) ? local : Value{zone.to_utc(std::get<int64_t>(local))};
      });
    }
    return call({t}, name, std::move(args), [](std::span<const Value> a) -> Value {
      return truncate_timestamp(std::get<std::string>(a[0]), ts_of(a[1]));
    });
  }
  if (name == "timezone" && n == 2) {
    // ts AT TIME ZONE zone: a timestamptz's local time in that zone, or the
    // instant a timestamp names there.
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    if (type_of(1).id == TypeId::unknown || type_of(1).id == TypeId::date) {
      args[1] = to_type(std::move(args[1]), TypeId::timestamptz, context);
    }
    const TypeId t = type_of(1).id;
    if (t != TypeId::timestamp && t != TypeId::timestamptz) throw no_function(name, args);
    const bool from_instant = t == TypeId::timestamptz;
    return call({from_instant ? TypeId::timestamp : TypeId::timestamptz}, name, std::move(args),
                [from_instant](std::span<const Value> a) -> Value {
                  const std::string& zone_name = std::get<std::string>(a[0]);
                  const auto zone = types::TimeZone::named(zone_name);
                  if (!zone) {
                    throw Error(SqlState::invalid_parameter_value, "time zone \"" + zone_name + "\" not recognized");
                  }
                  const int64_t ts = ts_of(a[1]);
                  return from_instant ? zone->to_local(ts) : zone->to_utc(ts);
                });
  }
  if ((name == "date_part" || name == "extract") && n == 2) {
    args[0] = to_type(std::move(args[0]), TypeId::text, context);
    if (type_of(1).id == TypeId::unknown) args[1] = to_type(std::move(args[1]), TypeId::timestamp, context);
    const TypeId t = type_of(1).id;
    if (!is_datetime(t)) throw no_function(name, args);
    const bool is_date = t == TypeId::date;
    if (is_date) {
      // Dates are converted to timestamps at midnight for the field arithmetic.
      auto cast = std::make_unique<FunctionExpr>(SqlType{TypeId::timestamp}, "cast", pack(std::move(args[1])),
                                                 [](std::span<const Value> a) -> Value {
                                                   return cast_value(a[0], {TypeId::date}, {TypeId::timestamp});
                                                 });
      cast->batch = dates_as_timestamps;
      args[1] = std::move(cast);
    }
    const bool numeric_result = name == "extract";
    const bool with_zone = t == TypeId::timestamptz;
    ExprPtr f = call({numeric_result ? TypeId::numeric : TypeId::float8}, name, std::move(args),
                [is_date, numeric_result, with_zone](std::span<const Value> a) -> Value {
                  if (ts_of(a[1]) == INT64_MIN || ts_of(a[1]) == INT64_MAX) {
                    // Unknown units are still an error: ask with a finite value first.
                    extract_field(std::get<std::string>(a[0]), 0, is_date && numeric_result);
                    return extract_infinite(std::get<std::string>(a[0]), ts_of(a[1]), numeric_result);
                  }
                  // A timestamptz's fields are those of its local time in the
                  // session's zone; its epoch is the instant's.
                  const std::string& unit = std::get<std::string>(a[0]);
                  const bool epoch = unit.size() == 5 && strncasecmp(unit.c_str(), "epoch", 5) == 0;
                  const int64_t ts = with_zone && !epoch ? types::current_time_zone().to_local(ts_of(a[1])) : ts_of(a[1]);
                  const Numeric v = extract_field(unit, ts, is_date && numeric_result);
                  if (numeric_result) return v;
                  return v.to_double();
                });
    if (auto* function = dynamic_cast<FunctionExpr*>(f.get()); function != nullptr && !with_zone) {
      function->batch = whole_fields(numeric_result, is_date && numeric_result);
      function->batch_takes_constants = true;
    }
    return f;
  }
  if (name == "to_timestamp" && n == 1) {
    // Unix epoch seconds to timestamptz, rounded to the microsecond
    // (PostgreSQL's float8_timestamptz, range and messages included).
    args[0] = to_type(std::move(args[0]), TypeId::float8, context);
    return call({TypeId::timestamptz}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const double seconds = std::get<double>(a[0]);
      if (std::isnan(seconds)) throw Error(SqlState::datetime_field_overflow, "timestamp cannot be NaN");
      if (std::isinf(seconds)) return seconds > 0 ? INT64_MAX : INT64_MIN;
      // Julian days: 0 is the first day PostgreSQL takes, 109203528 the first it does not
      // (294277-01-01); the Unix epoch is 2440588, PostgreSQL's 2451545.
      constexpr double kSecondsPerDay = 86400.0;
      if (seconds < kSecondsPerDay * (0.0 - 2440588.0) || seconds >= kSecondsPerDay * (109203528.0 - 2440588.0)) {
        char text[64];
        std::snprintf(text, sizeof text, "%g", seconds);
        throw Error(SqlState::datetime_field_overflow, std::string("timestamp out of range: \"") + text + "\"");
      }
      return static_cast<int64_t>(std::rint((seconds - kSecondsPerDay * (2451545.0 - 2440588.0)) * 1e6));
    });
  }
  if (name == "make_date" && n == 3) {
    for (auto& a : args) a = to_type(std::move(a), TypeId::int4, context);
    return call({TypeId::date}, name, std::move(args), [](std::span<const Value> a) -> Value {
      const int64_t y = std::get<int64_t>(a[0]), m = std::get<int64_t>(a[1]), d = std::get<int64_t>(a[2]);
      // Negative years are BC: -44 is 44 BC, astronomical year -43.
      const int64_t year = y < 0 ? y + 1 : y;
      static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
      if (y == 0 || m < 1 || m > 12 || d < 1 || d > days[m - 1] + (m == 2 && leap ? 1 : 0)) {
        char text[64];
        std::snprintf(text, sizeof text, "%lld-%02lld-%02lld", static_cast<long long>(y < 0 ? -y : y),
                      static_cast<long long>(m), static_cast<long long>(d));
        throw Error(SqlState::datetime_field_overflow, std::string("date field value out of range: ") + text);
      }
      // PostgreSQL's date range: 4714-11-24 BC to 5874897-12-31.
      if (year < -4713 || year > 5874897 || (year == -4713 && (m < 11 || (m == 11 && d < 24)))) {
        throw Error(SqlState::datetime_field_overflow, "date out of range");
      }
      return static_cast<int64_t>(days_from_civil(static_cast<int>(year), static_cast<int>(m), static_cast<int>(d)));
    });
  }
  return nullptr;
}

}  // namespace tally::executor::scalar
