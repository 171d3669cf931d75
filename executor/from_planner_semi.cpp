// Semi and anti joins of the FROM planner: EXISTS, NOT EXISTS and
// IN (subquery) conjuncts of WHERE whose subquery joins this query's rows.
#include "common/error.hpp"
#include "executor/from_planner_state.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/project_set.hpp"
#include "executor/subquery_binder.hpp"

namespace tally::executor {

using nlohmann::json;
using namespace from_planning;

// EXISTS / NOT EXISTS / IN (subquery) as a conjunct of WHERE, when the
// subquery is a plain SELECT ... FROM ... WHERE: its FROM joins this query's
// column space and the conjunct becomes a semi or anti join.
bool FromPlanner::State::try_semi_join(const json& conjunct, BindContext& ctx) {
  const json* link = nullptr;
  bool negated = false;
  if (conjunct.contains("SubLink")) {
    link = &conjunct["SubLink"];
  } else if (conjunct.contains("BoolExpr") && conjunct["BoolExpr"].value("boolop", "") == "NOT_EXPR" &&
             conjunct["BoolExpr"]["args"].size() == 1 && conjunct["BoolExpr"]["args"][0].contains("SubLink")) {
    link = &conjunct["BoolExpr"]["args"][0]["SubLink"];
    negated = true;
  }
  if (link == nullptr || !(*link)["subselect"].contains("SelectStmt")) return false;
  const std::string type = link->value("subLinkType", "");
  const bool exists = type == "EXISTS_SUBLINK";
  bool in = type == "ANY_SUBLINK" && !negated;
  if (in && link->contains("operName")) in = (*link)["operName"].back()["String"].value("sval", "") == "=";
  if (!exists && !in) return false;
  const json* select = &(*link)["subselect"]["SelectStmt"];
  if (exists) {
    // A target list that can change EXISTS's answer (a set-returning call,
    // aggregates) has no semi join: the subquery runs per outer row.
    std::optional<json> simplified = exists_simplified(*select);
    if (!simplified) return false;
    simplified_subqueries.push_back(std::move(*simplified));
    select = &simplified_subqueries.back();
  }
  const json& s = *select;
  if (in && has_set_returning_target(s)) return false;
  if (!s.contains("fromClause") || s.contains("groupClause") || s.contains("havingClause") || s.contains("withClause") ||
      s.contains("limitCount") || s.contains("limitOffset") || s.contains("windowClause") || s.contains("valuesLists") ||
      s.value("op", "SETOP_NONE") != "SETOP_NONE" || s.contains("distinctClause")) {
    return false;
  }
  if (has_window_call(s.value("targetList", json::array()))) return false;
  if (exists && has_aggregate_call(s.value("targetList", json::array()))) return false;
  // The tested values: one, or a row's elements ((a, b) IN (SELECT x, y ...)),
  // as many as the subquery's columns.
  std::vector<const json*> tested;
  if (in) {
    const json& test = (*link)["testexpr"];
    if (test.contains("RowExpr")) {
      const json& row = test["RowExpr"];
      if (row.contains("args"))
        for (const auto& element : row["args"]) tested.push_back(&element);
    } else {
      tested.push_back(&test);
    }
    if (tested.empty() || s["targetList"].size() != tested.size() || has_aggregate_call(s["targetList"])) return false;
  }
  SemiJoin semi;
  semi.kind = negated ? JoinKind::anti : JoinKind::semi;
  semi.scope = std::make_unique<RelationScope>();
  semi.context = std::make_unique<BindContext>(ctx);
  BindContext& inner = *semi.context;
  inner.relations = semi.scope.get();
  inner.intercept = nullptr;
  // A subquery inside the FROM would be bound and registered with the plan
  // (its caches are reset per run) before this could still give up below:
  // such a subquery runs per outer row.
  if (contains_sublink_node(s["fromClause"])) return false;
  BindContext* outer = &ctx;
  // A column of this query read inside the subquery's FROM (a JOIN's ON, a
  // function's argument) would be evaluated under the semi join, where this
  // query's row is not: such a subquery runs per outer row instead.
  auto outer_in_from = std::make_shared<bool>(false);
  inner.outer_column = [outer, outer_in_from](const json& node) {
    ExprPtr column = try_bind_column(node, *outer);
    if (column) *outer_in_from = true;
    return column;
  };
  inner.on_sublink = hook(&inner);
  semi.root = from_list(s["fromClause"], *semi.scope, inner);
  if (*outer_in_from) return false;
  inner.outer_column = [outer](const json& node) { return try_bind_column(node, *outer); };
  std::vector<json> parts;
  if (s.contains("whereClause")) split_and(s["whereClause"], parts);
  for (const auto& p : parts) semi.conjuncts.push_back(make_conjunct(bind_condition(p, inner, "WHERE")));
  // Each tested value belongs to this query, the subquery's column to the
  // subquery: each is bound in its own scope, then compared. A row matches
  // where every pair is equal; a NULL pair matches nothing, and a WHERE
  // drops a row whose IN is NULL as it drops one whose IN is false.
  for (size_t i = 0; i < tested.size(); ++i) {
    std::vector<ExprPtr> sides;
    sides.push_back(bind_expression(*tested[i], ctx));
    sides.push_back(bind_expression(s["targetList"][i]["ResTarget"]["val"], inner));
    ExprPtr eq = bind_pair_equality(sides[0]->type, sides[1]->type, ctx);
    substitute(eq, sides);
    semi.conjuncts.push_back(make_conjunct(std::move(eq)));
  }
  scopes.push_back(std::move(semi.scope));
  semi.scope = nullptr;
  semis.push_back(std::move(semi));
  return true;
}

}  // namespace tally::executor
