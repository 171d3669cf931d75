#pragma once
// Interval arithmetic with PostgreSQL 15's rules: timestamp + interval adds
// months on the calendar (clamping the day to the month's end), then days,
// then microseconds; interval * number spills fractional months into days and
// fractional days into time; timestamp - timestamp is justified into days.
// Errors: 22008 "interval out of range" / "timestamp out of range",
// "cannot subtract infinite timestamps"; 22012 division by zero.
#include <cstdint>

#include "executor/value.hpp"

namespace tally::executor::scalar {

// Infinite timestamps (INT64_MIN/MAX) pass through unchanged.
int64_t timestamp_plus_interval(int64_t timestamp, const Interval& span);
Interval interval_negate(const Interval& a);
Interval interval_add(const Interval& a, const Interval& b);
Interval interval_multiply(const Interval& a, double factor);
Interval interval_divide(const Interval& a, double divisor);
Interval timestamp_difference(int64_t a, int64_t b);
// Whole days of the time moved into the days (PostgreSQL's justify_hours).
Interval justify_hours(const Interval& v);
// PostgreSQL's interval2itm: the fields extract() and date_trunc() read.
struct IntervalFields {
  int64_t years, months, days, hours, minutes, micros_of_minute;
};
IntervalFields interval_fields(const Interval& v);

}  // namespace tally::executor::scalar
