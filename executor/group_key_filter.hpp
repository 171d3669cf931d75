#pragma once
// Keys a grouped run needs no other group than: a row whose GROUP BY keys
// are not a row of `keys` is left out before it is aggregated (a decorrelated
// subquery's groups restricted to the outer values that will look them up,
// executor/operators/subquery_restriction.hpp). The run takes it from
// ExecContext::group_key_filter.
#include <cstdint>
#include <vector>

#include "executor/expression.hpp"
#include "executor/operators/key_chains.hpp"
#include "executor/table_provider.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

struct GroupKeyFilter {
  const std::vector<Vector>* keys = nullptr;
  const KeyChains* chains = nullptr;  // over `keys`
  // The GROUP BY keys `keys` holds, by position (empty: every key, in order).
  std::vector<size_t> positions;
};

// The GROUP BY keys the filter tests.
std::vector<Expr*> filtered_keys(const GroupKeyFilter& filter, const std::vector<ExprPtr>& group_keys);

// The rows of `rows` whose GROUP BY keys the filter holds, in order.
std::vector<uint32_t> rows_with_wanted_keys(const GroupKeyFilter& filter, const std::vector<ExprPtr>& group_keys,
                                            const EvalInput& rows);

// The rows of a stored chunk of a table (the columns `scan_columns` read, of
// `table_columns`) whose GROUP BY keys the filter holds, in order. Plain
// integer-like key columns are tested on their stored values
// (stored_key_test.hpp); other keys are converted first.
std::vector<uint32_t> stored_rows_with_wanted_keys(const GroupKeyFilter& filter, const std::vector<ExprPtr>& group_keys,
                                                   const storage::ChunkBatch& batch, const std::vector<int>& scan_columns,
                                                   const std::vector<TableColumn>& table_columns,
                                                   const std::vector<Value>* parameters);

}  // namespace tally::executor
