#pragma once
// The constant arguments the column program compiler reads: a constant's
// value, a unit word, a date_trunc unit's length.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "executor/expression.hpp"

namespace tally::executor {

// The value of a constant expression; nullopt for another, or where its
// evaluation raises an error (the host path raises it as PostgreSQL does).
std::optional<Value> constant_of(const Expr& e, const std::vector<Value>* parameters);

// A constant text argument in lower case; nullopt when it is not one.
std::optional<std::string> constant_word(const Expr& e, const std::vector<Value>* parameters);

// Microseconds of a date_trunc unit that cuts a timestamp at a fixed length.
std::optional<int64_t> trunc_micros(const std::string& unit);

// The unit of `f` when it is extract(unit from ...) of a field whose values
// are whole numbers (numeric of scale 0) that column programs compute: a
// constant 'year', 'month', 'day', 'hour', 'minute', 'quarter', 'dow' or
// 'doy' in any case, returned in lower case; else nullopt.
std::optional<std::string> extract_whole_field(const FunctionExpr& f, const std::vector<Value>* parameters);

}  // namespace tally::executor
