#pragma once
// Arithmetic operators (+, -, *, unary -) over whole Vectors of numeric,
// integer and float8 values. The row-wise form boxes every operand into a Value and calls
// through std::function per row; TPC-H's price expressions
// (l_extendedprice * (1 - l_discount) * (1 + l_tax)) spent most of a scan in
// that boxing, not in the arithmetic. The batch form also skips Numeric's
// per-row rescaling: the rows of an operand share a scale (a numeric(p,s)
// column, a constant), so it is aligned once and the loop adds or
// multiplies 64-bit mantissas into 128-bit results. Integers and float8
// (`max(v1) - min(v2)` over a million groups) are one loop each.
#include "common/sql_type.hpp"
#include "executor/expression.hpp"

namespace tally::executor {

// The batch form of `op` for operands already coerced to `type`, or an empty
// kernel where only the row-wise form applies. Same answers and errors as the
// row-wise form (Numeric's scale rules and its 22003 beyond 38 digits; an
// integer or float8 batch with a row out of range declines, and the row-wise
// form raises its error). It takes constant operands as one row
// (FunctionExpr::batch_takes_constants).
VectorKernel vector_arithmetic(char op, SqlType type);

// The batch form of unary minus on numeric.
VectorKernel vector_numeric_negate();

}  // namespace tally::executor
