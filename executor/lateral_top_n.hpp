#pragma once
// The first rows per key of a table through LATERAL, the PostgreSQL idiom
// for top-n per group:
//
//   ... FROM c, LATERAL (SELECT o.x FROM o WHERE o.k = c.k [AND <o only>]
//                        [ORDER BY ...] LIMIT n) t
//
// is a join of c with o's first n rows per key, all found in one pass:
//
//   ... FROM c, (SELECT x, k AS key FROM
//                  (SELECT o.x, o.k, row_number() OVER (PARTITION BY o.k
//                     [ORDER BY ...]) AS rank FROM o [WHERE <o only>]) r
//                WHERE rank <= n) t
//   WHERE c.k = t.key
//
// (a LEFT JOIN LATERAL ... ON <cond>: ON <cond> AND c.k = t.key). Run as
// written, the subquery scans o once per distinct c.k: quadratic, minutes
// for a few hundred thousand keys. Ties in the ORDER BY are broken as
// arbitrarily as a LIMIT breaks them.
#include <optional>

#include <nlohmann/json.hpp>

namespace tally::executor {

struct PlanContext;

// `select` (a SelectStmt's fields) with each such LATERAL item rewritten as
// above, or nullopt where none is. The subquery must read one stored table,
// compare it with the items before it only by equalities of a column of each
// in its WHERE, have a constant LIMIT and no OFFSET, GROUP BY, DISTINCT,
// aggregate, window or subquery; the statement must not expand a `*`
// (it would list the key column the join adds).
std::optional<nlohmann::json> lateral_top_n(const nlohmann::json& select, const PlanContext& context);

}  // namespace tally::executor
