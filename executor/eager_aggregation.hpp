#pragma once
// Aggregation before a left join, where each group is one row of the
// preserved side (TPC-H Q13's orders per customer):
//
//   SELECT c.k, count(o.x) FROM c LEFT JOIN o ON c.k = o.k AND <o only>
//   [WHERE <c only>] GROUP BY c.k [, other columns of c]
//
// when the GROUP BY holds a NOT NULL unique key of c (so every group is
// one row of c) and every aggregate's argument is NULL on the join's
// unmatched row (o's columns under arithmetic: not count(1)), is
//
//   SELECT c.k, coalesce(e.a, 0) FROM c LEFT JOIN
//     (SELECT o.k, count(o.x) AS a FROM o WHERE <o only> GROUP BY o.k) e
//   ON c.k = e.k [WHERE <c only>]
//
// count over no matched row is 0 (hence coalesce), sum, min, max and avg
// NULL as the join's NULL. The grouped scan of o alone runs on the
// aggregation engines (the GPU's where it pays) instead of probing every o
// row into c and grouping the joined rows: Q13 at SF 1 on the CPU engine
// 215-229 ms as written against 85-106 ms rewritten.
#include <optional>

#include <nlohmann/json.hpp>

namespace tally::executor {

struct PlanContext;

// `select` (a SelectStmt's fields) rewritten as above, or nullopt where
// its shape is not exactly that: anything else in the statement (HAVING,
// DISTINCT, windows, WITH; ORDER BY other than output names, positions and
// grouped columns), count(*), DISTINCT or FILTER in an aggregate, a column
// not resolved to one of the two tables by its name alone or with its
// table's name or alias.
std::optional<nlohmann::json> eager_aggregation(const nlohmann::json& select, const PlanContext& context);

}  // namespace tally::executor
