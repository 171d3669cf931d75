#include "executor/scalar/interval_math.hpp"

#include <cmath>

#include "common/error.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::scalar {
namespace {

// PostgreSQL's MIN_TIMESTAMP (4714-11-24 BC) and END_TIMESTAMP (294277-01-01).
constexpr int64_t kMinTimestamp = -211'813'488'000'000'000LL;
constexpr int64_t kEndTimestamp = 9'223'371'331'200'000'000LL;

Error interval_out_of_range() { return Error(SqlState::datetime_field_overflow, "interval out of range"); }
Error timestamp_out_of_range() { return Error(SqlState::datetime_field_overflow, "timestamp out of range"); }

int64_t checked_timestamp(__int128 ts) {
  if (ts < kMinTimestamp || ts >= kEndTimestamp) throw timestamp_out_of_range();
  return static_cast<int64_t>(ts);
}

bool is_leap(int year) { return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0); }

int month_days(int year, int month) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap(year) ? 29 : days[month - 1];
}

void split(int64_t ts, int64_t& days, int64_t& time_of_day) {
  days = ts / kUsecsPerDay;
  time_of_day = ts % kUsecsPerDay;
  if (time_of_day < 0) {
    time_of_day += kUsecsPerDay;
    --days;
  }
}

Interval checked_interval(__int128 months, __int128 days, __int128 micros) {
  if (months < INT32_MIN || months > INT32_MAX || days < INT32_MIN || days > INT32_MAX || micros < INT64_MIN ||
      micros > INT64_MAX) {
    throw interval_out_of_range();
  }
  return {static_cast<int32_t>(months), static_cast<int32_t>(days), static_cast<int64_t>(micros)};
}

// TSROUND: rounds to the microsecond digits a double carries reliably.
double ts_round(double v) { return std::rint(v * 1e6) / 1e6; }

// interval_mul and interval_div share this: the whole months and days of
// a * factor (a / divisor: PostgreSQL divides rather than multiplying by the
// reciprocal, which rounds differently), and the fractions cascaded down.
Interval scale(const Interval& a, double operand, bool divide) {
  constexpr double kDaysPerMonth = 30, kSecsPerDay = 86400;
  auto apply = [operand, divide](double x) { return divide ? x / operand : x * operand; };
  const double month_d = apply(a.months), day_d = apply(a.days);
  if (std::isnan(month_d) || month_d > INT32_MAX || month_d < INT32_MIN || std::isnan(day_d) ||
      day_d > INT32_MAX || day_d < INT32_MIN) {
    throw interval_out_of_range();
  }
  Interval r{static_cast<int32_t>(month_d), static_cast<int32_t>(day_d), 0};
  const double month_remainder_days = ts_round((month_d - r.months) * kDaysPerMonth);
  double sec_remainder =
      ts_round((day_d - r.days + month_remainder_days - static_cast<int>(month_remainder_days)) * kSecsPerDay);
  if (std::fabs(sec_remainder) >= kSecsPerDay) {
    r.days += static_cast<int>(sec_remainder / kSecsPerDay);
    sec_remainder -= static_cast<int>(sec_remainder / kSecsPerDay) * kSecsPerDay;
  }
  r.days += static_cast<int32_t>(month_remainder_days);
  const double time_d = std::rint(apply(static_cast<double>(a.micros)) + sec_remainder * 1e6);
  if (std::isnan(time_d) || time_d < -9.2233720368547758e18 || time_d >= 9.2233720368547758e18) {
    throw interval_out_of_range();
  }
  r.micros = static_cast<int64_t>(time_d);
  return r;
}

}  // namespace

int64_t timestamp_plus_interval(int64_t ts, const Interval& span) {
  if (ts == INT64_MIN || ts == INT64_MAX) return ts;
  if (span.months != 0) {
    int64_t days, tod;
    split(ts, days, tod);
    int y, m, d;
    civil_from_days(static_cast<int32_t>(days), y, m, d);
    int64_t month = m + static_cast<int64_t>(span.months);
    int64_t year = y;
    if (month > 12) {
      year += (month - 1) / 12;
      month = (month - 1) % 12 + 1;
    } else if (month < 1) {
      year += month / 12 - 1;
      month = month % 12 + 12;
    }
    if (year < -4714 || year > 294277) throw timestamp_out_of_range();
    d = std::min(d, month_days(static_cast<int>(year), static_cast<int>(month)));
    ts = checked_timestamp(static_cast<__int128>(days_from_civil(static_cast<int>(year), static_cast<int>(month), d)) *
                               kUsecsPerDay + tod);
  }
  if (span.days != 0) {
    int64_t days, tod;
    split(ts, days, tod);
    ts = checked_timestamp(static_cast<__int128>(days + span.days) * kUsecsPerDay + tod);
  }
  return checked_timestamp(static_cast<__int128>(ts) + span.micros);
}

Interval interval_negate(const Interval& a) {
  return checked_interval(-static_cast<__int128>(a.months), -static_cast<__int128>(a.days),
                          -static_cast<__int128>(a.micros));
}

Interval interval_add(const Interval& a, const Interval& b) {
  return checked_interval(static_cast<__int128>(a.months) + b.months, static_cast<__int128>(a.days) + b.days,
                          static_cast<__int128>(a.micros) + b.micros);
}

Interval interval_multiply(const Interval& a, double factor) { return scale(a, factor, false); }

Interval interval_divide(const Interval& a, double divisor) {
  if (divisor == 0) throw Error(SqlState::division_by_zero, "division by zero");
  return scale(a, divisor, true);
}

Interval timestamp_difference(int64_t a, int64_t b) {
  if (a == INT64_MIN || a == INT64_MAX || b == INT64_MIN || b == INT64_MAX) {
    throw Error(SqlState::datetime_field_overflow, "cannot subtract infinite timestamps");
  }
  const __int128 diff = static_cast<__int128>(a) - b;
  if (diff < INT64_MIN || diff > INT64_MAX) throw interval_out_of_range();
  return justify_hours({0, 0, static_cast<int64_t>(diff)});
}

Interval justify_hours(const Interval& v) {
  const int64_t whole_days = v.micros / kUsecsPerDay;
  int64_t time = v.micros - whole_days * kUsecsPerDay;
  __int128 days = static_cast<__int128>(v.days) + whole_days;
  // The time takes the sign of the days.
  if (days > 0 && time < 0) {
    time += kUsecsPerDay;
    --days;
  } else if (days < 0 && time > 0) {
    time -= kUsecsPerDay;
    ++days;
  }
  return checked_interval(v.months, days, time);
}

IntervalFields interval_fields(const Interval& v) {
  IntervalFields f{};
  f.years = v.months / 12;
  f.months = v.months % 12;
  f.days = v.days;
  f.hours = v.micros / kUsecsPerHour;
  const int64_t rest = v.micros - f.hours * kUsecsPerHour;
  f.minutes = rest / kUsecsPerMinute;
  f.micros_of_minute = rest - f.minutes * kUsecsPerMinute;
  return f;
}

}  // namespace tally::executor::scalar
