#pragma once
// A query whose aggregates are all count(DISTINCT u) of one column u
// (ClickBench's COUNT(DISTINCT UserID), per search phrase or phone model):
//
//   SELECT k..., count(DISTINCT u) FROM <from> [WHERE <w>] [GROUP BY k...]
//   [HAVING ...] [ORDER BY ...] [LIMIT ...]
//
// is
//
//   SELECT k..., count(tally_value) FROM
//     (SELECT k..., u AS tally_value FROM <from> [WHERE <w>] GROUP BY k..., u) tally_distinct
//   [GROUP BY k...] [HAVING ...] [ORDER BY ...] [LIMIT ...]
//
// with each count(DISTINCT u) read as count(tally_value) (counting the
// groups' values leaves out NULL, as DISTINCT does). Both GROUP BYs run on
// the aggregation engines over every core (a stored text key by its
// dictionary codes), where DISTINCT keeps and sorts every group's values
// on the generic path or at the CPU engine's finalize. Where the GPU engine
// takes aggregates the statement runs as written instead
// (SelectPlan::distinct_rows_form): the device sorts and counts each key's
// values where they are, while the rewrite's inner groups, one per (key,
// value), would all come back to the host.
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

namespace tally::executor {

struct PlanContext;
struct SelectPlan;

// `select` (a SelectStmt's fields) rewritten as above, or nullopt where it
// is not exactly that shape: the keys bare column names; every other
// column named outside the counts a key (or, in ORDER BY, an output's
// name); no other aggregate, DISTINCT, window, WITH or set operation; no
// FILTER or ORDER BY in a count; u not a key; not under an enclosing query
// (whose columns the WHERE, moved into a derived table, would then read
// from one level further down).
std::optional<nlohmann::json> distinct_count_as_grouping(const nlohmann::json& select, const PlanContext& context);

// The plan of `select` where it is that shape (nullptr otherwise, or while
// planning its own as-written form): the rewrite's, holding the statement
// as written as its distinct_rows_form where an engine takes every count
// of a stored table's rows (not text: its codes are no order the engines
// sort by; the form would then run on the generic path).
std::shared_ptr<const SelectPlan> plan_distinct_counts(const nlohmann::json& select, PlanContext& context);

}  // namespace tally::executor
