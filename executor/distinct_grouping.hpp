#pragma once
// SELECT DISTINCT as GROUP BY: a SELECT DISTINCT of plain expressions (no
// aggregate, window function or subquery) has PostgreSQL's answer as a GROUP
// BY of every output column, which the aggregation engines run on every core
// or the GPU, where DISTINCT compared the whole result's rows on one thread.
#include <optional>

#include <nlohmann/json.hpp>

namespace tally::executor {

// The SELECT with its DISTINCT as GROUP BY 1, 2, ..., n; nullopt where it is
// not that shape, or where its ORDER BY names anything but output columns
// (PostgreSQL's 42P10 then comes from the DISTINCT path).
std::optional<nlohmann::json> distinct_as_grouping(const nlohmann::json& select);

}  // namespace tally::executor
