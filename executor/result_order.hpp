#pragma once
// ORDER BY, DISTINCT, DISTINCT ON, LIMIT and OFFSET over a SELECT's rows
// (run_select's last step), and ORDER BY ... LIMIT k's cut of each chunk's
// rows before they are gathered into the result.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "executor/expression.hpp"
#include "executor/group_aggregator.hpp"

namespace tally::storage {
struct ChunkBatch;
}

namespace tally::executor {

struct ExecContext;
struct ResultSet;
struct SelectPlan;

// The integer value of a constant expression (LIMIT, OFFSET), or fallback
// where there is none or it is NULL.
int64_t constant_int(const ExprPtr& e, const ExecContext& ec, int64_t fallback);

// The result's rows from `rows` rows of the plan's outputs (`columns`, the
// visible ones first): DISTINCT, ORDER BY, DISTINCT ON, OFFSET and LIMIT
// applied, the visible columns moved or gathered into `result`.
void order_and_limit(const SelectPlan& plan, ResultSet& result, std::vector<Vector>& columns, size_t rows,
                     const ExecContext& ec);

// k of ORDER BY ... LIMIT k (OFFSET included) over plain rows (no
// aggregate, DISTINCT or window), or 0 where each chunk must keep every row.
size_t chunk_top_n(const SelectPlan& plan, const ExecContext& ec);

// ORDER BY ... LIMIT k (OFFSET included) straight over an aggregation's
// columns (every sort key a bare key or aggregate column; no HAVING,
// DISTINCT, grouping sets or windows in between): the cut the aggregator
// may make before it builds its aggregates. No keys where there is none.
GroupAggregator::TopGroups top_groups(const SelectPlan& plan, const ExecContext& ec);

// One chunk's outputs at its rows that can be among the first k by the
// plan's ORDER BY, or at every row where that would not leave many fewer.
// Outputs other than bare columns are evaluated at every row first (their
// errors are every row's, as PostgreSQL projects before it sorts); bare
// columns (SELECT *'s dozens) are gathered at the kept rows only.
std::vector<Vector> evaluate_top_n_rows(const SelectPlan& plan, size_t k, const EvalInput& rows);

// The bare column the first ORDER BY key reads (its index within the
// table's), or null: for bounds taken from that column's stored values.
const ColumnExpr* first_sort_column(const SelectPlan& plan);

// The rows of a stored chunk (its columns the plan's scan_columns, in
// order) that WHERE keeps and that can be among the first k by ORDER BY,
// found from the columns WHERE and the sort keys read alone, so that the
// chunk's other columns are converted at those rows only (SELECT * ...
// WHERE URL LIKE ... ORDER BY EventTime LIMIT 10). nullopt where an output
// other than a bare column is not a sort key (its errors are every kept
// row's) or an expression reads columns it does not list. WHERE runs in
// `parts` parts on the scan's threads, as the chunk's usual selection does,
// unless the caller tested it: then `passing` lists the rows it keeps.
std::optional<std::vector<uint32_t>> top_n_rows_of_chunk(const SelectPlan& plan, size_t k,
                                                         const storage::ChunkBatch& batch,
                                                         const std::vector<Value>* parameters, int parts,
                                                         const std::vector<uint32_t>* passing = nullptr);

}  // namespace tally::executor
