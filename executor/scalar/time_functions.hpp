#pragma once
// Binding of the time (without time zone) type's operators and functions
// (executor/scalar/time_functions.cpp); make_binary_operator and
// make_function try these before the date/timestamp and interval ones.
#include <string>
#include <vector>

#include "executor/binder.hpp"

namespace tally::executor::scalar {

// time - time (interval), time ± interval (time, wrapping at midnight),
// date + time and time + date (timestamp), time * / number (the time as an
// interval); nullptr, operands untouched, when no operand is a time.
ExprPtr make_time_operator(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context);
// extract/date_part of a time; nullptr when not one of these.
ExprPtr make_time_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);

}  // namespace tally::executor::scalar
