#pragma once
// The "(cost=S..T rows=R width=W)" of each EXPLAIN node, in PostgreSQL's
// text format, from Tally's own estimates: a table's row count, the merged
// per-chunk HyperLogLog sketches of a grouped column (PostgreSQL's 200 per
// key where there are none), PostgreSQL's default selectivity for a filter.
// Clients read them: postgres_fdw's use_remote_estimate takes the first
// line's four numbers (get_remote_estimate's sscanf). The costs follow
// PostgreSQL's units (seq_page_cost 1, cpu_tuple_cost 0.01,
// cpu_operator_cost 0.0025), so a coordinator compares them with its own.
#include <optional>
#include <string>
#include <vector>

#include "common/sql_type.hpp"
#include "executor/expression.hpp"

namespace tally::executor {

class PhysicalOperator;
class TableSnapshot;

struct PlanCost {
  double startup = 0;
  double total = 0;
  double rows = 1;
  int width = 0;
};

// PostgreSQL's per-row and per-page cost units.
constexpr double kCpuTupleCost = 0.01;
constexpr double kCpuOperatorCost = 0.0025;
constexpr double kPageBytes = 8192;
// PostgreSQL's selectivity of a clause it knows nothing about (DEFAULT_INEQ_SEL).
constexpr double kDefaultFilterSelectivity = 1.0 / 3.0;
// PostgreSQL's distinct count of a column without statistics (DEFAULT_NUM_DISTINCT).
constexpr double kDefaultDistinct = 200;

// "  (cost=0.00..12.50 rows=100 width=8)", appended to a node's line.
std::string format_cost(const PlanCost& cost);
// Estimated bytes of a row of these types (PostgreSQL's 32 for a
// variable-width type without statistics).
int row_width(const std::vector<SqlType>& types);
// A sequential scan of `table` reading `columns`, with `filtered` a WHERE.
PlanCost scan_cost(const TableSnapshot& table, const std::vector<int>& columns, bool filtered);
// Distinct values of column `column` of `table` from its chunks' sketches;
// nullopt when a chunk has none.
std::optional<double> sketch_distinct(const TableSnapshot& table, int column);
// Groups of `keys` over `input_rows` rows; keys that are columns of
// `table` (null: none) are estimated from its sketches.
double estimate_groups(const std::vector<ExprPtr>& keys, const TableSnapshot* table, double input_rows);
// An operator tree's cost, its children's included.
PlanCost operator_cost(const PhysicalOperator& op);
// A sort of `input` (n log n comparisons before the first row).
PlanCost sort_cost(const PlanCost& input);
// An aggregation of `input` into `groups` rows of `width` bytes.
PlanCost aggregate_cost(const PlanCost& input, double groups, size_t aggregates, int width);

}  // namespace tally::executor
