#pragma once
// Set-returning functions in a select list (SELECT unnest(indkey),
// generate_subscripts(indkey, 1) FROM pg_index; SELECT generate_series(1, 3)),
// with PostgreSQL's ProjectSet semantics: each row of the query without them
// becomes as many rows as its longest set-returning call gives, the shorter
// calls padded with NULL and the other columns repeated; a row for which
// every call is empty disappears. ORDER BY, DISTINCT and LIMIT apply to the
// expanded rows. The calls are unnest(array), generate_subscripts(array,
// dim[, reverse]), generate_series over integers, regexp_split_to_table and regexp_matches,
// each a whole select-list item; anything else with them answers 0A000.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/select_plan.hpp"

namespace tally::executor {

// True when an item of the SELECT's target list calls a set-returning function
// (not counting its subqueries, which are planned on their own).
bool has_set_returning_target(const nlohmann::json& select);
// True when the node itself is a call of one of the set-returning functions.
bool is_set_returning_call(const nlohmann::json& node);
// The type of the values a select-list call of the pg_catalog set-returning
// function `name` over arguments of these types gives, as
// plan_project_set types it; nullopt for a call it refuses. No side
// effects: pg_proc lists a set-returning function by it (function_catalog.cpp).
std::optional<SqlType> set_returning_result(const std::string& name, const std::vector<SqlType>& args);

// The plan of such a SELECT: the query with each call replaced by its
// arguments runs first; its rows are expanded as the scan of a relation the
// SELECT's ORDER BY, DISTINCT and LIMIT then read.
std::shared_ptr<const SelectPlan> plan_project_set(const nlohmann::json& select, PlanContext& context);

}  // namespace tally::executor
