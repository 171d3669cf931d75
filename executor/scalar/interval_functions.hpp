#pragma once
// Binding of the interval type's operators and functions (executor/scalar/
// interval_functions.cpp); make_binary_operator, make_unary_operator and
// make_function try these first.
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

}  // namespace tally::executor::scalar
