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

catalog::ColumnStats compute_column_stats(const ColumnVector& column);

}  // namespace tally::storage
