#pragma once
// Per-chunk column statistics (row/null counts, min/max, HyperLogLog sketch)
// computed when a chunk is written; the estimator and the dense-key-range
// check read them from the catalog.
#include "catalog/table_snapshot.hpp"
#include "storage/column_vector.hpp"

namespace tally::storage {

// HLL precision of every stored sketch: 2^12 registers, 1.6% standard error.
// Must equal executor/estimate's kHllDefaultPrecision so sketches merge.
constexpr int stats_hll_precision = 12;

// `threads`: at most this many threads summarize parts of the column (0: one
// per core); a caller summarizing several columns at once divides the cores.
catalog::ColumnStats compute_column_stats(const ColumnVector& column, unsigned threads = 0);

}  // namespace tally::storage
