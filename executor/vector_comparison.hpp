#pragma once
// Comparison operators (=, <>, <, <=, >, >=) over whole Vectors of integer-
// like, boolean, float or numeric values. The row-wise form (one Value per operand per
// row, through std::function) costs ~55 ns a row; a HAVING over the 65,536
// groups of a GPU query spent longer in it than the GPU spent aggregating.
// Text kinds keep the row-wise form.
#include <string>

#include "common/sql_type.hpp"
#include "executor/expression.hpp"

namespace tally::executor {

// The batch form of comparison `op` for operands already coerced to `common`,
// or an empty kernel where only the row-wise form applies. Same answers as
// compare_values: floats order NaN above every other value and equal to itself.
VectorKernel vector_comparison(const std::string& op, SqlType common);

}  // namespace tally::executor
