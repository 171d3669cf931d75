#pragma once
// Plans of the SELECTs whose rows come from a set operation (UNION,
// INTERSECT, EXCEPT [ALL], nested) or a VALUES list, with PostgreSQL's type
// resolution across branches and rows, and ORDER BY / LIMIT / OFFSET over
// the result. plan_select hands such statements here.
#include <memory>

#include <nlohmann/json.hpp>

#include "executor/select_plan.hpp"

namespace tally::executor {

std::shared_ptr<const SelectPlan> plan_set_operation(const nlohmann::json& select, PlanContext& context);
std::shared_ptr<const SelectPlan> plan_values(const nlohmann::json& select, PlanContext& context);

}  // namespace tally::executor
