#pragma once
// Decorrelation of a scalar aggregate subquery (TPC-H Q2, Q17, Q20):
//   x < (SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)
// runs once per distinct outer value when evaluated as written, a full scan
// each time. When the enclosing query's values appear only in equalities
// `inner expression = outer column` at the top of the subquery's WHERE, the
// subquery is the same as
//   SELECT l_partkey, 0.2 * avg(l_quantity) FROM lineitem GROUP BY l_partkey
// looked up by the outer value: one scan in all. A tuple no group has (no
// row matched, or an outer NULL, which `=` never matches) gets the value of
// the aggregate over no rows, which is the same for every such tuple (count
// is 0, most others NULL): the subquery run once with NULL outer values
// gives it, so PostgreSQL's empty-group semantics hold exactly.
// Anything else (outer values elsewhere, GROUP BY, LIMIT, key types whose
// equality is not plain value equality) keeps per-value evaluation.
#include <map>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/expression.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

struct GroupedSubquery {
  // Outputs: the key expressions, then the subquery's value.
  std::shared_ptr<const SelectPlan> plan;
  // key_slots[k]: the correlated value (SubqueryExpr::correlated) that key k is compared with.
  std::vector<size_t> key_slots;
};

// `select`: the subquery's SelectStmt; `outer_refs`: the parse location of
// every column reference it bound to the enclosing query, with the
// correlated value it became. Null when the rewrite would not be exact.
std::unique_ptr<GroupedSubquery> plan_grouped_subquery(const nlohmann::json& select,
                                                       const std::map<int, size_t>& outer_refs,
                                                       const std::vector<ExprPtr>& correlated,
                                                       const PlanContext& plan_context);

}  // namespace tally::executor
