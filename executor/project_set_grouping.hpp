#pragma once
// A select list with a set-returning call and aggregation, as pgcli's
// casing query has it:
//   SELECT regexp_split_to_table(prosrc, '\W+') AS word, count(1) FROM ... GROUP BY word
// PostgreSQL expands the calls before it groups (the ProjectSet below the
// Agg). Rewritten so: a derived table computes the calls, the aggregates'
// arguments and the other column references; the query groups its rows.
#include <optional>

#include <nlohmann/json.hpp>

namespace tally::executor {

// The rewritten SelectStmt, or nullopt when `select` does not both call a
// set-returning function in its select list and aggregate or group (or
// holds a subquery there, which this rewrite does not move).
std::optional<nlohmann::json> group_after_set_functions(const nlohmann::json& select);

}  // namespace tally::executor
