#pragma once
// Binding subquery expressions (SubLink nodes) and the column references a
// subquery makes to the queries around it.
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

}  // namespace tally::executor
