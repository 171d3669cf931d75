#pragma once
// Binding of the bytea type's operators and functions (executor/scalar/
// bytea_functions.cpp); make_binary_operator and make_function try these
// before the text ones, which would otherwise take a bytea as text.
#include <string>
#include <vector>

#include "executor/binder.hpp"

namespace tally::executor::scalar {

// bytea || bytea; nullptr, operands untouched, when no operand is a bytea.
ExprPtr make_bytea_operator(const std::string& op, ExprPtr& left, ExprPtr& right, BindContext& context);
// length/octet_length of a bytea, encode(bytea, format), decode(text,
// format); nullptr when not one of these.
ExprPtr make_bytea_function(const std::string& name, std::vector<ExprPtr>& args, BindContext& context);

}  // namespace tally::executor::scalar
