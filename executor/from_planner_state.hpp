#pragma once
// The FROM planner's working state (FromPlanner::State) and the nodes it
// builds, shared by executor/from_planner.cpp (relations, joins, semi joins,
// join order) and executor/from_planner_lateral.cpp (LATERAL items).
// Private to those two files.
#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "executor/consumed_references.hpp"
#include "executor/from_planner.hpp"
#include "executor/operators/table_sample.hpp"
#include "executor/join_conjunct.hpp"
#include "executor/operators/hash_join.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/subquery_binder.hpp"

namespace tally::executor {
namespace from_planning {

using nlohmann::json;

// Row estimate of a derived table or WITH query before it runs.
inline constexpr double kDerivedRows = 1000;
// How many times smaller than the other side an outer join's preserved side
// must be estimated for the join to hold it (build_outer).
inline constexpr double kHoldPreservedRatio = 2;

// lateral: `left` joined to a subquery (derived_*) that reads left's
// columns (`correlated`), run per distinct tuple of them.
enum class NodeKind { table, system, derived, join, lateral };
enum class JoinType { inner, left, right, full };

struct Node {
  NodeKind kind = NodeKind::table;
  std::shared_ptr<const TableSnapshot> table;
  std::shared_ptr<const MaterializedRelation> system;
  std::shared_ptr<const SelectPlan> derived;
  nlohmann::json derived_select;  // what `derived` was planned from, and in what context
  PlanContext derived_context;
  std::vector<OutputColumn> derived_columns;
  std::shared_ptr<const SharedCte> shared;  // a WITH query whose rows every reference shares
  std::string alias;
  int base = 0;  // column space index of the relation's first column
  JoinType join = JoinType::inner;
  std::unique_ptr<Node> left, right;
  std::vector<ExprPtr> on;  // ON conjuncts and USING equalities
  std::set<int> cols;       // every column space index in the subtree
  std::vector<ExprPtr> filters;
  std::vector<ExprPtr> correlated;  // lateral: the left columns the subquery reads
  // TABLESAMPLE of a table or catalog relation: its method and its
  // arguments (float4 percent, float8 seed or null), constant expressions.
  struct Sample {
    SampleMethod method = SampleMethod::bernoulli;
    ExprPtr percent, seed;
  };
  std::unique_ptr<Sample> sample;
};

struct Part {
  std::unique_ptr<PhysicalOperator> op;
  std::set<int> cols;
  double est = 1;
  bool joined = false;  // made by build_tree's joins, not one item
};

// Conditions in the order they are tested: subqueries last.
inline std::vector<ExprPtr> ordered(std::vector<ExprPtr> conditions) {
  std::stable_partition(conditions.begin(), conditions.end(), [](const ExprPtr& e) { return !has_subquery(*e); });
  return conditions;
}

struct SemiJoin {
  JoinKind kind = JoinKind::semi;
  std::unique_ptr<Node> root;
  std::unique_ptr<RelationScope> scope;
  std::unique_ptr<BindContext> context;
  std::vector<Conjunct> conjuncts;
};

// Whether a FROM item may read the columns of the items before it: a
// LATERAL subquery, or a function in FROM (always lateral in PostgreSQL)
// whose arguments name a column.
inline bool is_lateral(const json& item) {
  if (item.contains("RangeSubselect")) return item["RangeSubselect"].value("lateral", false);
  if (!item.contains("RangeFunction")) return false;
  const json& rf = item["RangeFunction"];
  return rf.value("lateral", false) || rf.value("functions", json::array()).dump().find("\"ColumnRef\"") != std::string::npos;
}

}  // namespace from_planning

using from_planning::JoinType;
using from_planning::Node;
using from_planning::NodeKind;
using from_planning::Part;
using from_planning::SemiJoin;

struct FromPlanner::State {
  PlanContext& pc;
  SublinkHookFactory hook;
  size_t width = 0;
  std::vector<std::unique_ptr<RelationScope>> scopes;
  BindContext* context = nullptr;
  std::unique_ptr<Node> root;
  std::vector<Conjunct> where;
  std::vector<SemiJoin> semis;
  // EXISTS subqueries as simplified for semi joins (exists_simplified), kept
  // while the plan is made from them.
  std::deque<nlohmann::json> simplified_subqueries;
  std::set<int> used;
  // Columns a plan reads without a reference the scopes counted (the two
  // sides of a USING join's equality).
  std::set<int> used_uncounted;
  // The stored table and column number behind each column space index of a
  // table scan, and the distinct counts their sketches gave: join estimates.
  std::map<int, std::pair<const TableSnapshot*, int>> table_columns;
  std::map<int, std::optional<double>> distinct_cache;
  // The references the conditions applied so far have consumed: what each join level passes up.
  ConsumedReferences consumed{[this](int c) { return total_uses(c); }, used, used_uncounted};

  State(PlanContext& p, SublinkHookFactory h) : pc(p), hook(std::move(h)) {}
  int total_uses(int column) const {
    int total = 0;
    for (const auto& scope : scopes) total += scope->uses(column);
    return total;
  }

  std::unique_ptr<Node> relation(const nlohmann::json& item, RelationScope& scope, BindContext& ctx);
  std::unique_ptr<Node> from_list(const nlohmann::json& from, RelationScope& scope, BindContext& ctx);
  std::unique_ptr<Node> derived_node(const nlohmann::json& select, const std::string& alias, const nlohmann::json* colnames,
                                     const PlanContext& inner, RelationScope& scope,
                                     const std::shared_ptr<SharedCte>& shared = nullptr);
  void join_node(Node& node, const nlohmann::json& j, RelationScope& scope, BindContext& ctx);
  void lateral_node(Node& node, const nlohmann::json& item, RelationScope& scope, BindContext& ctx);
  bool try_semi_join(const nlohmann::json& conjunct, BindContext& ctx);
  void add_implied_filters(const nlohmann::json& node, BindContext& ctx);
  std::unique_ptr<PhysicalOperator> build_tree(Node* node, std::vector<Conjunct> pool);
  Part build_item(Node* node);
  Part build_lateral(Node* node);
  // A RangeTableSample item: its relation's node with the sample on it.
  std::unique_ptr<Node> sampled_relation(const nlohmann::json& item, RelationScope& scope, BindContext& ctx);
  // A sampled node's scan: every column it reads output, no filter (the
  // sample is of the table's rows), then the sample, then its filters.
  Part build_sampled(Node* node);
  bool read_by_filters_only(int column, const std::vector<ExprPtr>& filters) const;
  std::unique_ptr<PhysicalOperator> with_filters(std::unique_ptr<PhysicalOperator> op, std::vector<ExprPtr> filters);
  void plan_top_n(Node& node);
  double key_distinct(const Expr& key, double rows);
  std::optional<double> join_estimate(const Part& a, const Part& b, const std::vector<Conjunct>& pool,
                                      const EqualColumns& classes);
  // The order build_tree joins its items in (indexes into parts).
  std::vector<size_t> cheapest_order(const std::vector<Part>& parts, const std::vector<Conjunct>& pool,
                                     const EqualColumns& classes);
  // The last `system_columns` are reached by name only (MaterializedRelation).
  void add_columns(Node& node, const std::vector<OutputColumn>& columns, const nlohmann::json* colnames, RelationScope& scope,
                   size_t system_columns = 0);
};

}  // namespace tally::executor
