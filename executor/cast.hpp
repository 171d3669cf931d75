#pragma once
// Conversions between SQL types with PostgreSQL's semantics and errors
// (22003 on overflow, 22P02 on bad text, rounding rules of each pair).
#include "common/sql_type.hpp"
#include "executor/value.hpp"

namespace tally::executor {

enum class CastContext { implicit, assignment, explicit_ };

// Whether PostgreSQL would apply this cast in the given context.
bool can_cast(TypeId from, TypeId to, CastContext context);
// Converts a non-NULL value (NULL passes through).
Value cast_value(const Value& value, SqlType from, SqlType to, bool explicit_cast = true);
// 22003 "<type> out of range" when v does not fit the integer type.
int64_t check_integer_range(__int128 v, TypeId type);
// Numeric rounded/checked for numeric(p,s) (22003 numeric field overflow).
Numeric apply_numeric_typmod(const Numeric& n, SqlType type);

}  // namespace tally::executor
