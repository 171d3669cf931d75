#pragma once
// GROUP BY columns that a grouped unique key determines, fetched for the
// groups a LIMIT keeps instead of grouped (TPC-H Q10 groups by c_custkey and
// six more columns of customer and nation, and keeps 20 groups):
//
//   SELECT k, d, agg AS a FROM t, u, ... [WHERE ...] GROUP BY k, d, ...
//   [HAVING ...] ORDER BY a LIMIT n
//
// where k is a unique key of NOT NULL columns of t and d other columns of t,
// is
//
//   SELECT g.k, r.d, g.a FROM
//     (SELECT k, agg AS a FROM t, u, ... [WHERE ...] GROUP BY k, ...
//      [HAVING ...] ORDER BY a LIMIT n) g,
//     t AS r
//   WHERE r.k = g.k ORDER BY g.a
//
// One row of t has each k, so every group holds one value of d: grouping by
// k alone makes the same groups. The aggregation no longer carries t's other
// columns (a text column's codes, for a lookup join all of t's rows of
// them), and the n groups kept find their row of t by its key. The rewrite
// applies per table of the FROM list, to each whose dependent columns the
// ORDER BY and HAVING do not read (outside aggregates).
#include <optional>

#include <nlohmann/json.hpp>

namespace tally::executor {

struct PlanContext;

// `select` (a SelectStmt's fields) rewritten as above, or nullopt where its
// shape is not that: a FROM item other than a stored table, a GROUP BY item
// other than a column, no ORDER BY or LIMIT, DISTINCT, windows, WITH, a
// subquery outside the WHERE, a column of an enclosing query, a name not
// resolved to one column of the FROM list's tables.
std::optional<nlohmann::json> dependent_group_columns(const nlohmann::json& select, const PlanContext& context);

}  // namespace tally::executor
