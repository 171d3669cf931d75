#pragma once
// Binding of the interval type's operators and functions (executor/scalar/
// interval_functions.cpp); make_binary_operator, make_unary_operator and
// make_function try these first.
#include <optional>
#include <string>
#include <vector>

#include "executor/binder.hpp"

namespace tally::executor::scalar {

// The operator when `op` over these operand types involves an interval
// (date/timestamp ± interval, timestamp - timestamp, interval ± interval,
// interval * / number); nullptr, operands untouched, otherwise.
ExprPtr make_interval_operator(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context);
// -interval.
ExprPtr make_interval_negate(ExprPtr arg);
// extract/date_part/date_trunc over an interval, age, justify_days/hours; nullptr when not one of these.
ExprPtr make_interval_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);
// PostgreSQL's canonical name of a date/time unit as extract and date_trunc
// read it ("secs" -> "second", "us" -> "microseconds"); empty when no unit.
std::string canonical_unit(const std::string& field);
// The interval type a type name's modifiers give (`interval day`, `interval(3)`).
SqlType interval_type(const std::vector<int>& typmods);
// timestamptz + interval as PostgreSQL's timestamptz_pl_interval: months and
// days move the local time of the session's zone (a day is 23 or 25 hours
// across a daylight change), the rest of the interval the instant.
int64_t timestamptz_plus_interval(int64_t t, const Interval& span);
// generate_series over timestamps (with_zone: timestamptz): start, start +
// step, ... while not past stop in the step's direction, as PostgreSQL's
// generate_series_timestamp(tz); 22023 for a zero step, 0A000 past max_rows.
// generate_series(start, stop, step)'s result type when it is the timestamp
// series, as PostgreSQL resolves the call: timestamp when a bound is one and
// none is timestamptz, else timestamptz (dates, untyped literals); nullopt
// when it is the integer series (no datetime bound, no interval step).
std::optional<TypeId> timestamp_series_type(TypeId start, TypeId stop, TypeId step);
std::vector<int64_t> timestamp_series(int64_t start, int64_t stop, const Interval& step, bool with_zone,
                                      int64_t max_rows);

}  // namespace tally::executor::scalar
