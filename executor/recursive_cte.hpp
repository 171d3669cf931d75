#pragma once
// WITH RECURSIVE: a query that names itself, `non-recursive term UNION [ALL]
// recursive term`, planned as a relation whose rows are computed when it is
// scanned, by PostgreSQL's iteration: the non-recursive term's rows seed a
// working table; the recursive term runs over the working table and its new
// rows (for UNION, those not seen before) become the next working table,
// until one run adds none. The result is every row produced.
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "executor/select_plan.hpp"
#include "executor/system_relation_provider.hpp"

namespace tally::executor {

// True when the CommonTableExpr's query names `name` in a FROM clause.
bool refers_to_itself(const nlohmann::json& common_table_expr);

// The relation a self-referencing CommonTableExpr of WITH RECURSIVE stands
// for. 0A000 for a shape other than the UNION [ALL] of two SELECTs; 42804
// when the terms' column types differ.
std::shared_ptr<const MaterializedRelation> plan_recursive_cte(
    const nlohmann::json& common_table_expr, const PlanContext& context);

}  // namespace tally::executor
