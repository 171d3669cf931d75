#pragma once
// The fraction of a stored table's rows that a scan's pushed-down conjuncts
// keep, from the table's own statistics, so that the join order is decided
// by the sides' real sizes (TPC-H Q2's 800 parts of 200,000 against a
// region's fifth of the suppliers):
// - a conjunct over one text column: the share of the column's dictionary
//   entries it keeps, each entry taken as equally frequent (p_type LIKE
//   '%BRASS', r_name = 'EUROPE', c_mktsegment IN (...));
// - comparisons of a column with constants (=, <>, <, <=, >, >=, BETWEEN,
//   a date range): the share of the column's [min, max] range they keep
//   (chunk statistics), an equality one value in the column's distinct
//   count (its merged HyperLogLog sketches);
// - anything else: PostgreSQL's selectivity of a clause it cannot estimate.
// Conjuncts are taken as independent (their shares multiply), as
// PostgreSQL takes them.
#include <vector>

#include "executor/expression.hpp"

namespace tally::executor {

class TableSnapshot;

// `conjuncts` are bound against a column space of `space_width` columns in
// which the table's column i is space index base + i.
double scan_selectivity(const std::vector<ExprPtr>& conjuncts, const TableSnapshot& table, int base,
                        size_t space_width);

}  // namespace tally::executor
