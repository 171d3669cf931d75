#pragma once
// Whether two bound expressions compute the same value for every row: the
// same node kinds, types, functions, constants and columns, argument by
// argument. Conservative: a node kind it does not know (subqueries, window
// results) and a volatile function's call are never equal to anything, so
// a false answer only costs a computation done twice, never a wrong value.
#include "executor/expression.hpp"

namespace tally::executor {

bool same_expression(const Expr& a, const Expr& b);

}  // namespace tally::executor
