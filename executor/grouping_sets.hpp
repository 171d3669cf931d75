#pragma once
// GROUP BY with GROUPING SETS, ROLLUP and CUBE: the clause expanded into its
// grouping sets (the cross product of its items, as PostgreSQL expands it),
// each a list of indexes into the query's grouping keys.
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally::executor {

using GroupingSetList = std::vector<std::vector<int>>;

// Whether the GROUP BY clause has a GROUPING SETS, ROLLUP, CUBE or () item.
bool has_grouping_sets(const nlohmann::json& group_clause);
// The grouping sets of the clause; `key` binds one grouping expression and
// returns its key index (equal expressions share one); errors past PostgreSQL's
// limits (54011 for a CUBE of more than 12 elements, 54001 past 4096 sets).
GroupingSetList expand_grouping_sets(const nlohmann::json& group_clause, const std::function<int(const nlohmann::json&)>& key);

// GROUP BY DISTINCT: keeps the first of the sets that hold the same keys (in any order).
void remove_duplicate_sets(GroupingSetList& sets);

}  // namespace tally::executor
