// LATERAL items of the FROM planner: a subquery or function in FROM that
// reads the columns of the items before it, planned as a LateralJoin.
#include "common/error.hpp"
#include "executor/from_planner_state.hpp"
#include "executor/operators/lateral_join.hpp"
#include "executor/subquery_expr.hpp"

namespace tally::executor {

using nlohmann::json;
using namespace from_planning;

// The lateral item `item` joined (node.join) to node.left: its subquery is
// planned with the columns of the FROM items before it as outer values
// (OuterRefExprs over parameters, as a correlated subquery's), and the node
// runs it per distinct tuple of them (LateralJoin). One that reads none of
// them is an ordinary derived table joined to node.left.
void FromPlanner::State::lateral_node(Node& node, const json& item, RelationScope& scope, BindContext& ctx) {
  json select;
  std::string alias;
  const json* colnames = nullptr;
  if (item.contains("RangeSubselect")) {
    const auto& rs = item["RangeSubselect"];
    if (!rs.contains("alias")) throw Error(SqlState::syntax_error, "subquery in FROM must have an alias");
    if (!rs["subquery"].contains("SelectStmt")) throw Error(SqlState::feature_not_supported, "this subquery in FROM is not supported");
    select = rs["subquery"]["SelectStmt"];
    alias = rs["alias"].value("aliasname", "");
    if (rs["alias"].contains("colnames")) colnames = &rs["alias"]["colnames"];
  } else {
    // A function in FROM: the subquery SELECT * FROM f(...) [AS alias(columns)],
    // whose one relation carries the item's alias and column names.
    json rf = item["RangeFunction"];
    rf.erase("lateral");
    const json& call = rf["functions"][0]["List"]["items"][0];
    alias = call.contains("FuncCall") ? call["FuncCall"]["funcname"].back()["String"].value("sval", "") : "";
    if (rf.contains("alias")) alias = rf["alias"].value("aliasname", alias);
    const json star = {{"ResTarget", {{"val", {{"ColumnRef", {{"fields", json::array({json{{"A_Star", json::object()}}})}}}}}}}};
    select = {{"targetList", json::array({star})},
              {"fromClause", json::array({json{{"RangeFunction", rf}}})},
              {"limitOption", "LIMIT_OPTION_DEFAULT"},
              {"op", "SETOP_NONE"}};
  }
  auto count = std::make_shared<size_t>(0);
  std::vector<ExprPtr> correlated;
  PlanContext inner = pc;
  inner.outer_column = [&](const json& ref) -> ExprPtr {
    ExprPtr outer = try_bind_column(ref, ctx);
    if (!outer) return nullptr;
    const SqlType type = outer->type;
    correlated.push_back(std::move(outer));
    return std::make_unique<OuterRefExpr>(type, correlated.size() - 1, count);
  };
  std::shared_ptr<const SelectPlan> plan = plan_select(select, inner);
  *count = correlated.size();
  inner.outer_column = nullptr;
  std::vector<OutputColumn> columns;
  for (size_t i = 0; i < plan->visible; ++i) columns.push_back({plan->names[i], plan->outputs[i]->type});
  if (correlated.empty()) {
    auto right = std::make_unique<Node>();
    right->kind = NodeKind::derived;
    right->alias = alias;
    right->derived = std::move(plan);
    right->derived_select = select;
    right->derived_context = inner;
    right->derived_columns = std::move(columns);
    add_columns(*right, right->derived_columns, colnames, scope);
    node.right = std::move(right);
    node.cols = node.left->cols;
    node.cols.insert(node.right->cols.begin(), node.right->cols.end());
    return;
  }
  for (const auto& c : correlated) {
    std::set<int> refs;
    collect_refs(*c, refs);
    if (!refs.empty() && (node.join == JoinType::right || node.join == JoinType::full)) {
      throw Error(SqlState::invalid_column_reference, "invalid reference to FROM-clause entry for table \"" + alias + "\"")
          .with_detail("The combining JOIN type must be INNER or LEFT for a LATERAL reference.");
    }
    if (!subset(refs, node.left->cols)) {
      throw Error(SqlState::feature_not_supported, "a LATERAL reference to a FROM item outside its join is not supported");
    }
    // Read by the lateral side, not by a condition: never dropped below it.
    used_uncounted.insert(refs.begin(), refs.end());
  }
  node.kind = NodeKind::lateral;
  node.alias = alias;
  node.derived = std::move(plan);
  node.derived_select = select;
  node.derived_columns = std::move(columns);
  node.correlated = std::move(correlated);
  add_columns(node, node.derived_columns, colnames, scope);
  node.cols.insert(node.left->cols.begin(), node.left->cols.end());
}

// A lateral join: filters over the left side alone go below it; an inner
// join's ON conditions and the other filters test its rows above it; a LEFT
// join's ON conditions decide which lateral rows match.
Part FromPlanner::State::build_lateral(Node* node) {
  std::vector<Conjunct> left_pool;
  std::vector<ExprPtr> above, on;
  for (auto& f : node->filters) {
    Conjunct c = make_conjunct(std::move(f));
    if (subset(c.refs, node->left->cols)) {
      left_pool.push_back(std::move(c));
    } else {
      consumed.consume(*c.expr);
      above.push_back(std::move(c.expr));
    }
  }
  node->filters.clear();
  for (auto& e : node->on) {
    consumed.consume(*e);
    (node->join == JoinType::left ? on : above).push_back(std::move(e));
  }
  node->on.clear();
  auto left = build_tree(node->left.get(), std::move(left_pool));
  std::vector<int> lateral_layout;
  for (size_t i = 0; i < node->derived_columns.size(); ++i) lateral_layout.push_back(node->base + static_cast<int>(i));
  Part part;
  part.cols = node->cols;
  part.est = std::max(1.0, left->estimated_rows());
  part.op = std::make_unique<LateralJoin>(std::move(left), node->derived, std::move(node->correlated), node->alias,
                                          node->derived_columns, std::move(lateral_layout),
                                          node->join == JoinType::left, ordered(std::move(on)), width, part.est);
  part.op = with_filters(std::move(part.op), std::move(above));
  return part;
}

}  // namespace tally::executor
