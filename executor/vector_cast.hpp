#pragma once
// Casts between integer types (int2, int4, int8) over whole Vectors: the
// row-wise cast (one Value in, one Value out, through std::function) cost
// ~30 ns a row, paid for every row whenever an integer column meets an
// operand of a wider type (`int4_column < 5000000000`, `sum(v) < $1::int4`).
#include "common/sql_type.hpp"
#include "executor/expression.hpp"

namespace tally::executor {

// The batch form of the cast from `from` to `to` where both are integer types
// (values copied, range checked), or an empty kernel. A value out of `to`'s
// range makes the kernel decline, so the row-wise cast raises PostgreSQL's
// error for it ("integer out of range", 22003).
VectorKernel vector_integer_cast(SqlType from, SqlType to);
// text and varchar (without a length) to text or varchar: the same strings,
// copied as a whole Vector rather than boxed row by row; char(n) to text or
// varchar (without a length): its strings without their trailing blanks.
VectorKernel vector_text_cast(SqlType from, SqlType to);

}  // namespace tally::executor
