#pragma once
// WHERE and HAVING over a set of evaluated columns: the row numbers a
// condition keeps, on one thread or in contiguous parts on the worker pool.
#include <cstdint>
#include <vector>

#include "executor/expression.hpp"

namespace tally::executor {

// The rows of `input` where `where` is true, ascending (every row when null).
std::vector<uint32_t> select_rows(const Expr* where, const EvalInput& input);

// select_rows over `parts` contiguous ranges of the input on the worker
// pool: a table of fewer chunks than cores (a dimension table, a subquery's
// table) has each chunk's WHERE spread over the cores, not one core per
// chunk; HAVING over many groups likewise. Each part copies only the columns
// the condition reads.
std::vector<uint32_t> select_rows_in_parts(Expr* where, const EvalInput& input, int parts);

// How many parts HAVING over `groups` groups runs in: one below 2^17 groups
// or when it calls a volatile function (which must see the groups in order,
// on the statement's thread); else one per 2^16 groups, at most a part per
// core (`threads`, or the pool's when 0).
int having_parts_for(Expr& having, size_t groups, int threads);

}  // namespace tally::executor
