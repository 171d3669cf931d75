#pragma once
// Planning a SELECT's FROM clause and WHERE into an operator tree: scans with
// the conjuncts that touch only them and only the columns the query reads,
// joins (comma lists, JOIN ... ON / USING / NATURAL, inner, left, right,
// full, cross) ordered greedily (each step the join estimated to give the
// fewest rows, from row counts and the join keys' distinct counts) with the
// hash table built on the smaller side, derived tables and WITH queries, LATERAL
// subqueries and functions (run per distinct tuple of the columns they read
// from the items before them: LateralJoin), and EXISTS / NOT
// EXISTS / IN subqueries in WHERE turned into semi and anti joins.
//
// Two steps, because which columns a scan reads is known only once the whole
// query is bound: begin() makes the FROM clause's names visible (the scope
// `context` binds against) and binds WHERE; the caller binds the rest; then
// finish() builds the operators.
#include <functional>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/binder.hpp"
#include "executor/operators/physical_operator.hpp"
#include "executor/relation_scope.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

// Makes the subquery hook of a BindContext (binds SubLinks with that context
// as the enclosing scope).
using SublinkHookFactory = std::function<std::function<ExprPtr(const nlohmann::json&)>(BindContext*)>;

class FromPlanner {
 public:
  FromPlanner(PlanContext& plan_context, SublinkHookFactory sublink_hook);
  ~FromPlanner();
  // Plans `select`'s FROM clause and binds its WHERE; `context` (hooks and
  // settings already set) gets the FROM clause's scope.
  void begin(const nlohmann::json& select, BindContext& context);
  // The operator tree; its columns sit in a column space of width() columns.
  std::unique_ptr<PhysicalOperator> finish();
  size_t width() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tally::executor
