// A function of one dictionary-coded text argument (a stored text column) and
// constants, computed once per distinct code of the input and spread over the
// rows. A chunk's million rows of a text column hold far fewer distinct
// values, and a regular expression or a character count per row costs
// microseconds (regexp_replace over a referrer column, length(URL)).
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "executor/expression.hpp"

namespace tally::executor {

// values: the call's evaluated arguments, each of `rows` rows or, where
// `one_row[a]`, a constant's single row. Returns the call's result, or
// nullopt where the call does not have that shape or its input has too many
// distinct codes for this to pay (the caller then evaluates row by row).
std::optional<Vector> evaluate_per_code(const FunctionExpr& call, std::span<const Vector* const> values,
                                        std::span<const bool> one_row, size_t rows);

}  // namespace tally::executor
