#pragma once
// GROUP BY a set-returning call of the select list, as pgcli's casing query
// has it:
//   SELECT regexp_split_to_table(prosrc, '\W+') AS word, count(1) FROM ... GROUP BY word
// PostgreSQL expands the calls before it groups (a ProjectSet below the Agg;
// without such a key it expands them after, over the groups). Rewritten so:
// a derived table computes the calls, the aggregates' arguments and the
// other column references; the query groups its rows.
#include <optional>

#include <nlohmann/json.hpp>

namespace tally::executor {

// The rewritten SelectStmt, or nullopt when `select` does not group by a
// set-returning call (or holds a subquery in its select list or HAVING,
// which this rewrite does not move).
std::optional<nlohmann::json> group_after_set_functions(const nlohmann::json& select);

}  // namespace tally::executor
