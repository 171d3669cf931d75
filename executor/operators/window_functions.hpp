#pragma once
// One window call evaluated over rows sorted by its window's PARTITION BY and
// ORDER BY: ranking (row_number, rank, dense_rank, percent_rank, cume_dist,
// ntile), offsets (lag, lead), frame values (first_value, last_value,
// nth_value) and aggregates over frames, with PostgreSQL 15's results.
// Aggregates reuse the generic accumulators (aggregate_function.hpp), so
// their types and digits are those of GROUP BY; a frame that only grows (the
// default frame, anything from UNBOUNDED PRECEDING) is accumulated
// incrementally, and peers share one result.
#include "executor/operators/window_frame.hpp"
#include "executor/row_sort.hpp"
#include "executor/window_call.hpp"

namespace tally::executor {

// The call's result for each input row (input row order).
Vector evaluate_window_call(const WindowCall& call, const RowOrdering& ordering, const FrameCursor& frame,
                            const EvalInput& input);

}  // namespace tally::executor
