#pragma once
// A statement's only output a count of one column's distinct values
// (ClickBench's COUNT(DISTINCT UserID), COUNT(DISTINCT SearchPhrase)):
//
//   SELECT count(DISTINCT c) FROM <from> [WHERE <w>] [LIMIT ...]
//
// is
//
//   SELECT count(tally_value) FROM (SELECT c AS tally_value FROM <from>
//                                    [WHERE <w>] GROUP BY c) tally_distinct [LIMIT ...]
//
// (count of the groups' values leaves out the NULL group, as DISTINCT does)
//
// The GROUP BY runs on the aggregation engines over every core (a stored
// text column grouped by its dictionary codes), where a DISTINCT aggregate
// runs on the generic path on one thread, hashing each row's value.
#include <optional>

#include <nlohmann/json.hpp>

namespace tally::executor {

// `select` (a SelectStmt's fields) rewritten as above, or nullopt where it
// is not exactly that shape (one output; the argument a bare column; no
// GROUP BY, HAVING, DISTINCT, ORDER BY, window, WITH or set operation;
// no FILTER or ORDER BY in the call).
std::optional<nlohmann::json> distinct_count_as_grouping(const nlohmann::json& select);

}  // namespace tally::executor
