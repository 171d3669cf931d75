#pragma once
// percentile_cont(ARRAY[f1, f2, ...]) WITHIN GROUP (ORDER BY x) and
// percentile_disc of an array of fractions, as PostgreSQL answers them (an
// array holding each fraction's percentile, NULL for a NULL fraction): the
// SELECT rewritten so that the call is ARRAY[percentile_cont(f1) WITHIN
// GROUP (ORDER BY x), ...] (NULL where no value is ordered), whose calls the
// ordered-set engines answer from one sort of each group's values. The fractions are an ARRAY[...] of
// constants or an array literal ('{0.25,0.5}'::float8[]); an unnamed output
// column keeps the function's name.
#include <optional>

#include <nlohmann/json.hpp>

namespace tally::executor {

// The SELECT with every such call expanded (outside its subqueries, which
// are planned, and expanded, on their own); nullopt where it has none.
std::optional<nlohmann::json> expand_percentile_arrays(const nlohmann::json& select);

}  // namespace tally::executor
