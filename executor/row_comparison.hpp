#pragma once
// Row comparisons, (a, b) op (c, d), expanded into comparisons of their
// elements as PostgreSQL's make_row_comparison_op and make_row_distinct_op
// do: = holds when every pair is equal, <> when any pair differs, and an
// ordering operator compares the pairs left to right, the first pair that
// differs (or holds a NULL) deciding: (a, b) < (c, d) is
// a < c OR (a = c AND b < d), NULL where that pair is NULL.
#include <cstddef>
#include <functional>
#include <string>

#include "executor/binder.hpp"

namespace tally::executor {

// The elements of one side, bound afresh on each call (an element may be
// used twice: in an ordering's "<" and its "=").
using RowElement = std::function<ExprPtr(size_t)>;

// `op` between rows of `left_size` and `right_size` elements: 42601 when the
// sizes differ, 42804 when the elements' operator does not yield boolean,
// 42883 for a boolean operator that is not a comparison.
ExprPtr make_row_comparison(const std::string& op, const RowElement& left, size_t left_size, const RowElement& right,
                            size_t right_size, BindContext& context);

// IS [NOT] DISTINCT FROM between rows: distinct when any pair is.
ExprPtr make_row_distinct(bool not_distinct, const RowElement& left, size_t left_size, const RowElement& right,
                          size_t right_size, BindContext& context);

}  // namespace tally::executor
