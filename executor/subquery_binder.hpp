#pragma once
// Binding subquery expressions (SubLink nodes) and the column references a
// subquery makes to the queries around it.
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/binder.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

class SubqueryExpr;

// A column reference bound in `context` (its relations, then the enclosing
// queries), or null when none of them has the column.
ExprPtr try_bind_column(const nlohmann::json& column_ref, BindContext& context);

// EXISTS, scalar, IN / op ANY / op ALL: plans the subquery with `context` as
// its enclosing scope and returns a SubqueryExpr (recorded in `registry`, so
// the plan that owns it can reset its cache before each run). ARRAY and row
// comparisons answer 0A000.
ExprPtr bind_sublink(const nlohmann::json& sublink, BindContext& context, const PlanContext& plan_context,
                     std::vector<const SubqueryExpr*>& registry);

// The SELECT inside a SubLink node, checked to be a plain SelectStmt.
const nlohmann::json& sublink_select(const nlohmann::json& sublink);

// An EXISTS subquery's SELECT as PostgreSQL simplifies it
// (simplify_EXISTS_query): EXISTS asks only whether a row comes, so the
// target list, GROUP BY, DISTINCT, ORDER BY and a positive constant LIMIT
// of a SELECT without aggregates, HAVING, window functions, set-returning
// targets, set operations, OFFSET or row locks cannot change its answer.
// Without them a column of the outer query read only in the target list
// no longer makes the subquery correlated (it runs once, not once per
// outer row), and a LIMIT no longer keeps it from becoming a semi join.
// nullopt where the SELECT is not of that form.
std::optional<nlohmann::json> exists_simplified(const nlohmann::json& select);

}  // namespace tally::executor
