#include "executor/from_planner.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/error.hpp"
#include "executor/consumed_references.hpp"
#include "executor/explain_costs.hpp"
#include "executor/from_planner_state.hpp"
#include "executor/function_relation.hpp"
#include "executor/operators/hash_join.hpp"
#include "executor/operators/lateral_join.hpp"
#include "executor/operators/one_time_filter.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/operators/subquery_scan.hpp"
#include "executor/operators/system_scan.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/operators/top_n_per_partition.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/shared_cte.hpp"
#include "executor/project_set.hpp"
#include "executor/subquery_binder.hpp"
#include "executor/subquery_expr.hpp"
#include "executor/join_conjunct.hpp"
#include "executor/join_order.hpp"
#include "executor/scan_selectivity.hpp"
#include "executor/table_provider.hpp"
#include "executor/view_expansion.hpp"

namespace tally::executor {

using nlohmann::json;
using namespace from_planning;

void FromPlanner::State::add_columns(Node& node, const std::vector<OutputColumn>& columns, const json* colnames,
                                     RelationScope& scope, size_t system_columns) {
  node.base = static_cast<int>(width);
  const size_t visible = columns.size() - system_columns;
  std::vector<ScopedColumn> scoped;
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string name = columns[i].name;
    if (colnames != nullptr && i < colnames->size() && i < visible) name = (*colnames)[i]["String"].value("sval", name);
    scoped.push_back({node.alias, name, columns[i].type, static_cast<int>(width + i), true, i < visible});
    node.cols.insert(static_cast<int>(width + i));
  }
  if (colnames != nullptr && colnames->size() > visible) {
    throw Error(SqlState::invalid_column_reference, "table \"" + node.alias + "\" has " +
                                                        std::to_string(visible) + " columns available but " +
                                                        std::to_string(colnames->size()) + " columns specified");
  }
  width += columns.size();
  scope.add_relation(node.alias, scoped);
}

std::unique_ptr<Node> FromPlanner::State::derived_node(const json& select, const std::string& alias,
                                                      const json* colnames, const PlanContext& inner,
                                                      RelationScope& scope, const std::shared_ptr<SharedCte>& shared) {
  // It reads the enclosing query levels' columns as its own query level would
  // (the same parameters reach it); the items beside it only when LATERAL
  // (lateral_node).
  PlanContext pc_inner = inner;
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::derived;
  node->alias = alias;
  if (shared && shared->plan) {
    node->derived = shared->plan;
  } else if (shared && !shared->correlated) {
    // The first reference to a shared WITH query plans it, and finds
    // whether it reads an enclosing query's columns: one that does is
    // planned at each reference, with that reference's values.
    auto reads_outer = std::make_shared<bool>(false);
    if (pc_inner.outer_column) {
      pc_inner.outer_column = [outer = pc_inner.outer_column, reads_outer](const json& column_ref) {
        ExprPtr bound = outer(column_ref);
        if (bound) *reads_outer = true;
        return bound;
      };
    }
    node->derived = plan_select(select, pc_inner);
    pc_inner.outer_column = inner.outer_column;
    if (*reads_outer) shared->correlated = true;
    else shared->plan = node->derived;
  } else {
    node->derived = plan_select(select, pc_inner);
  }
  if (shared && shared->plan) node->shared = shared;
  node->derived_select = select;
  node->derived_context = pc_inner;
  for (size_t i = 0; i < node->derived->visible; ++i) {
    node->derived_columns.push_back({node->derived->names[i], node->derived->outputs[i]->type});
  }
  add_columns(*node, node->derived_columns, colnames, scope);
  return node;
}

std::unique_ptr<Node> FromPlanner::State::relation(const json& item, RelationScope& scope, BindContext& ctx) {
  if (item.contains("RangeVar")) {
    const auto& rv = item["RangeVar"];
    const std::string schema = rv.value("schemaname", "");
    const std::string name = rv.value("relname", "");
    const json* alias = rv.contains("alias") ? &rv["alias"] : nullptr;
    const std::string alias_name = alias ? alias->value("aliasname", name) : name;
    const json* colnames = alias && alias->contains("colnames") ? &(*alias)["colnames"] : nullptr;
    if (schema.empty()) {
      for (size_t i = pc.ctes.size(); i-- > 0;) {
        if (pc.ctes[i].name != name) continue;
        const json& cte = pc.ctes[i].node;
        const std::shared_ptr<SharedCte> shared = pc.ctes[i].shared;
        PlanContext visible = pc;
        visible.ctes.resize(i);  // a WITH query sees the ones before it
        const json* cte_names = colnames ? colnames : (cte.contains("aliascolnames") ? &cte["aliascolnames"] : nullptr);
        if (!cte["ctequery"].contains("SelectStmt")) throw Error(SqlState::feature_not_supported, "WITH queries other than SELECT are not supported");
        return derived_node(cte["ctequery"]["SelectStmt"], alias_name, cte_names, visible, scope, shared);
      }
    }
    std::shared_ptr<const MaterializedRelation> system;
    for (size_t i = pc.cte_relations.size(); schema.empty() && !system && i-- > 0;) {
      if (pc.cte_relations[i].first == name) system = pc.cte_relations[i].second;
    }
    std::shared_ptr<const TableSnapshot> table;
    if (!system && pc.tables != nullptr && (schema.empty() || schema == "public")) table = pc.tables->find_table(schema, name);
    if (auto view = table || system ? std::nullopt : expand_view(pc, schema, name, colnames))
      return derived_node(view->select, alias_name, &view->colnames, view->context, scope);
    if (!table && !system && pc.system_relations != nullptr) system = pc.system_relations->find(schema, name);
    if (!table && !system) {
      Error e(SqlState::undefined_table, "relation \"" + (schema.empty() ? name : schema + "." + name) + "\" does not exist");
      if (rv.contains("location")) e.with_position(rv["location"].get<int>() + 1);
      throw e;
    }
    auto node = std::make_unique<Node>();
    node->alias = alias_name;
    std::vector<OutputColumn> columns;
    if (table) {
      node->table = table;
      for (const auto& c : table->columns()) columns.push_back({c.name, c.type});
    } else {
      node->kind = NodeKind::system;
      node->system = system;
      columns = system->columns;
    }
    add_columns(*node, columns, colnames, scope, table ? 0 : system->system_columns);
    return node;
  }
  if (item.contains("RangeSubselect")) {
    // LATERAL with nothing before it to read is a derived table like any other.
    const auto& rs = item["RangeSubselect"];
    if (!rs.contains("alias")) throw Error(SqlState::syntax_error, "subquery in FROM must have an alias");
    if (!rs["subquery"].contains("SelectStmt")) throw Error(SqlState::feature_not_supported, "this subquery in FROM is not supported");
    const auto& alias = rs["alias"];
    // The enclosing levels as this FROM's own context sees them: a semi
    // join's FROM marks a read of its outer query (which then runs per row).
    PlanContext enclosing = pc;
    enclosing.outer_column = ctx.outer_column;
    return derived_node(rs["subquery"]["SelectStmt"], alias.value("aliasname", ""),
                        alias.contains("colnames") ? &alias["colnames"] : nullptr, enclosing, scope);
  }
  if (item.contains("JoinExpr")) {
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::join;
    join_node(*node, item["JoinExpr"], scope, ctx);
    return node;
  }
  if (item.contains("RangeFunction")) {
    const auto& rf = item["RangeFunction"];
    FunctionRelation function = plan_function_relation(rf, ctx);
    auto node = std::make_unique<Node>();
    node->kind = NodeKind::system;
    node->alias = function.alias;
    node->system = function.relation;
    const json* colnames = rf.contains("alias") && rf["alias"].contains("colnames") ? &rf["alias"]["colnames"] : nullptr;
    add_columns(*node, function.relation->columns, colnames, scope);
    return node;
  }
  if (item.contains("RangeTableSample")) return sampled_relation(item, scope, ctx);
  throw Error(SqlState::feature_not_supported, "this kind of FROM item is not supported");
}

// A comma-separated FROM list: cross joins (the WHERE conjuncts join them).
std::unique_ptr<Node> FromPlanner::State::from_list(const json& from, RelationScope& scope, BindContext& ctx) {
  std::unique_ptr<Node> joined;
  for (const auto& item : from) {
    if (joined && is_lateral(item)) {
      auto lateral = std::make_unique<Node>();
      lateral->kind = NodeKind::join;
      lateral->left = std::move(joined);
      lateral_node(*lateral, item, scope, ctx);
      joined = std::move(lateral);
      continue;
    }
    auto next = relation(item, scope, ctx);
    if (!joined) {
      joined = std::move(next);
      continue;
    }
    auto cross = std::make_unique<Node>();
    cross->kind = NodeKind::join;
    cross->cols = joined->cols;
    cross->cols.insert(next->cols.begin(), next->cols.end());
    cross->left = std::move(joined);
    cross->right = std::move(next);
    joined = std::move(cross);
  }
  return joined;
}

void FromPlanner::State::join_node(Node& node, const json& j, RelationScope& scope, BindContext& ctx) {
  const std::string type = j.value("jointype", "JOIN_INNER");
  if (type == "JOIN_INNER") node.join = JoinType::inner;
  else if (type == "JOIN_LEFT") node.join = JoinType::left;
  else if (type == "JOIN_RIGHT") node.join = JoinType::right;
  else if (type == "JOIN_FULL") node.join = JoinType::full;
  else throw Error(SqlState::feature_not_supported, "this join type is not supported");
  if (j.contains("alias")) throw Error(SqlState::feature_not_supported, "an alias on a JOIN is not supported");
  node.left = relation(j["larg"], scope, ctx);
  if (is_lateral(j["rarg"])) {
    if (j.value("isNatural", false) || j.contains("usingClause")) {
      throw Error(SqlState::feature_not_supported, "JOIN LATERAL with USING or NATURAL is not supported");
    }
    lateral_node(node, j["rarg"], scope, ctx);
    if (j.contains("quals")) {
      std::vector<json> parts;
      split_and(j["quals"], parts);
      for (const auto& p : parts) node.on.push_back(bind_condition(p, ctx, "JOIN/ON"));
    }
    return;
  }
  node.right = relation(j["rarg"], scope, ctx);
  node.cols = node.left->cols;
  node.cols.insert(node.right->cols.begin(), node.right->cols.end());

  std::vector<std::string> using_names;
  if (j.value("isNatural", false)) {
    for (const auto& l : scope.columns()) {
      if (!l.unqualified || !l.in_star || !node.left->cols.count(l.index)) continue;
      for (const auto& r : scope.columns()) {
        if (r.unqualified && r.in_star && node.right->cols.count(r.index) && r.name == l.name &&
            std::find(using_names.begin(), using_names.end(), l.name) == using_names.end()) {
          using_names.push_back(l.name);
        }
      }
    }
  }
  for (const auto& n : j.value("usingClause", json::array())) using_names.push_back(n["String"].value("sval", ""));
  if (!using_names.empty() && node.join == JoinType::full) {
    throw Error(SqlState::feature_not_supported, "FULL JOIN with USING or NATURAL is not supported");
  }
  for (const auto& name : using_names) {
    auto side = [&](const std::set<int>& cols, const char* which) {
      int found = -1;
      for (const auto& c : scope.columns()) {
        if (!c.unqualified || c.name != name || !cols.count(c.index)) continue;
        if (found >= 0 && found != c.index) {
          throw Error(SqlState::ambiguous_column, "common column name \"" + name + "\" appears more than once in " + which + " table");
        }
        found = c.index;
      }
      if (found < 0) {
        throw Error(SqlState::undefined_column, "column \"" + name + "\" specified in USING clause does not exist in " + which + " table");
      }
      return found;
    };
    const int li = side(node.left->cols, "left"), ri = side(node.right->cols, "right");
    SqlType lt{}, rt{};
    for (const auto& c : scope.columns()) {
      if (c.index == li) lt = c.type;
      if (c.index == ri) rt = c.type;
    }
    ExprPtr eq = bind_pair_equality(lt, rt, ctx);
    remap(*eq, {li, ri});
    used.insert(li);
    used.insert(ri);
    used_uncounted.insert(li);
    used_uncounted.insert(ri);
    node.on.push_back(std::move(eq));
    scope.add_merged(name, node.join == JoinType::right ? rt : lt, node.join == JoinType::right ? ri : li, {li, ri});
  }
  if (j.contains("quals")) {
    std::vector<json> parts;
    split_and(j["quals"], parts);
    for (const auto& p : parts) node.on.push_back(bind_condition(p, ctx, "JOIN/ON"));
  }
}

std::unique_ptr<PhysicalOperator> FromPlanner::State::with_filters(std::unique_ptr<PhysicalOperator> op,
                                                                  std::vector<ExprPtr> filters) {
  if (filters.empty()) return op;
  return std::make_unique<FilterOperator>(std::move(op), ordered(std::move(filters)), width);
}

// A filter that bounds a ranking window column of a derived table (`WHERE
// rn <= 2` over `row_number() OVER (...) AS rn`) lets the subquery's window
// run as a top-n per partition: the subquery is planned again knowing the
// bound (plan_select decides whether its windows allow it). Where it did,
// every row it gives is ranked within the bound, and the filters that only
// say so are left out (a million partitions' two rows each were otherwise
// tested again); `rn = 2` and other conditions stay.
void FromPlanner::State::plan_top_n(Node& node) {
  for (size_t i = 0; i < node.derived->visible; ++i) {
    if (dynamic_cast<const WindowResultExpr*>(node.derived->outputs[i].get()) == nullptr) continue;
    const int column = node.base + static_cast<int>(i);
    std::optional<int64_t> bound;
    for (const auto& f : node.filters) {
      if (auto b = ranking_bound(*f, column)) bound = bound ? std::min(*bound, *b) : *b;
    }
    if (!bound) continue;
    PlanContext again = node.derived_context;
    again.top_n_output = static_cast<int>(i);
    again.top_n_k = *bound;
    node.derived = plan_select(node.derived_select, again);
    const auto* top_n = dynamic_cast<const TopNPerPartition*>(node.derived->source.get());
    if (top_n != nullptr && top_n->k() == *bound) {
      std::erase_if(node.filters, [&](const ExprPtr& f) { return implied_by_top_n(*f, column, *bound); });
    }
    return;
  }
}

// Whether every reference the scopes resolved to `column` is in `filters`
// (a filter with a subquery counts as reading every column).
bool FromPlanner::State::read_by_filters_only(int column, const std::vector<ExprPtr>& filters) const {
  if (used_uncounted.count(column)) return false;
  const int total = consumed.total(column);
  int in_filters = 0;
  for (const auto& f : filters) {
    if (has_subquery(*f)) return false;
    in_filters += count_refs(*f, column);
  }
  return total > 0 && in_filters == total;
}

Part FromPlanner::State::build_item(Node* node) {
  if (node->sample) return build_sampled(node);
  Part part;
  part.cols = node->cols;
  if (node->kind == NodeKind::table) {
    std::vector<int> table_columns, layout, filter_only;
    for (int c : node->cols) {
      this->table_columns[c] = {node->table.get(), c - node->base};
      if (!used.count(c)) continue;
      if (read_by_filters_only(c, node->filters)) {
        filter_only.push_back(c);
        continue;
      }
      table_columns.push_back(c - node->base);
      layout.push_back(c);
    }
    // The columns only the scan's own filters read come last: read and
    // tested, not output (a comment tested by NOT LIKE is not carried
    // through the joins above).
    const size_t outputs = table_columns.size();
    for (int c : filter_only) {
      table_columns.push_back(c - node->base);
      layout.push_back(c);
    }
    part.est = static_cast<double>(node->table->row_count()) *
               (node->filters.empty() ? 1.0 : scan_selectivity(node->filters, *node->table, node->base, width));
    part.op = std::make_unique<TableScan>(node->table, node->alias, std::move(table_columns), std::move(layout), width,
                                          ordered(std::move(node->filters)), part.est, outputs);
    return part;
  }
  if (node->kind == NodeKind::system) {
    std::vector<int> relation_columns, layout;
    for (int c : node->cols) {
      if (!used.count(c)) continue;
      relation_columns.push_back(c - node->base);
      layout.push_back(c);
    }
    part.op = std::make_unique<SystemScan>(node->system, node->alias, std::move(relation_columns), std::move(layout),
                                           width, ordered(std::move(node->filters)));
    part.est = part.op->estimated_rows();
    return part;
  }
  if (node->kind == NodeKind::derived) {
    if (!node->shared) plan_top_n(*node);  // shared rows are all of them
    std::vector<int> layout(node->cols.begin(), node->cols.end());
    part.op = std::make_unique<SubqueryScan>(node->derived, node->alias, node->derived_columns, std::move(layout),
                                             node->shared);
    part.est = kDerivedRows;
    part.op = with_filters(std::move(part.op), std::move(node->filters));
    return part;
  }
  if (node->kind == NodeKind::lateral) return build_lateral(node);
  // An outer join: its sides are planned on their own, its ON decides
  // matches. Filters over the preserved side alone go below the join.
  std::vector<Conjunct> left_pool, right_pool, above;
  for (auto& f : node->filters) {
    Conjunct c = make_conjunct(std::move(f));
    if (node->join == JoinType::left && subset(c.refs, node->left->cols)) left_pool.push_back(std::move(c));
    else if (node->join == JoinType::right && subset(c.refs, node->right->cols)) right_pool.push_back(std::move(c));
    else above.push_back(std::move(c));
  }
  node->filters.clear();
  for (auto& c : above) node->filters.push_back(std::move(c.expr));
  // ON conditions over the NULL-extended side alone only decide which of
  // its rows can match: they filter that side below the join. So do those
  // that read no column (tested once there: `ON 1 = 0` leaves the side
  // empty and the join NULL-extends every preserved row without pairing).
  std::vector<ExprPtr> on;
  for (auto& e : node->on) {
    Conjunct c = make_conjunct(std::move(e));
    const bool constant = is_one_time_condition(*c.expr);
    const bool nullable_right = node->join == JoinType::left && (constant || (!c.refs.empty() && subset(c.refs, node->right->cols)));
    const bool nullable_left = node->join == JoinType::right && (constant || (!c.refs.empty() && subset(c.refs, node->left->cols)));
    if (nullable_right) right_pool.push_back(std::move(c));
    else if (nullable_left) left_pool.push_back(std::move(c));
    else on.push_back(std::move(c.expr));
  }
  node->on = std::move(on);
  Part left{build_tree(node->left.get(), std::move(left_pool)), node->left->cols, 0};
  Part right{build_tree(node->right.get(), std::move(right_pool)), node->right->cols, 0};
  left.est = left.op->estimated_rows();
  right.est = right.op->estimated_rows();
  const bool swap = node->join == JoinType::right;
  Part& probe = swap ? right : left;
  Part& build = swap ? left : right;
  std::vector<ExprPtr> probe_keys, build_keys, residual;
  for (auto& e : node->on) {
    Conjunct c = make_conjunct(std::move(e));
    ExprPtr pk, bk;
    if (take_equality(c, probe.cols, build.cols, pk, bk)) {
      probe_keys.push_back(std::move(pk));
      build_keys.push_back(std::move(bk));
    } else {
      residual.push_back(std::move(c.expr));
    }
  }
  const double est = std::max(probe.est, build.est);
  // A preserved side much smaller than the other (TPC-H Q13: customer LEFT
  // JOIN orders) is held instead (build_outer): its table stays in the
  // caches while the large side streams past it, rather than each small-side
  // row walking a chain of large-side rows scattered through memory; its
  // unmatched rows cost one pass at the end.
  if (node->join != JoinType::full && !probe_keys.empty() && probe.est * kHoldPreservedRatio < build.est) {
    part.op = std::make_unique<HashJoin>(JoinKind::build_outer, std::move(build.op), std::move(probe.op),
                                         std::move(build_keys), std::move(probe_keys), ordered(std::move(residual)),
                                         width, est);
  } else {
    const JoinKind kind = node->join == JoinType::full ? JoinKind::full : JoinKind::probe_outer;
    part.op = std::make_unique<HashJoin>(kind, std::move(probe.op), std::move(build.op), std::move(probe_keys),
                                         std::move(build_keys), ordered(std::move(residual)), width, est);
  }
  part.est = est;
  part.op = with_filters(std::move(part.op), std::move(node->filters));
  return part;
}

// Distinct values of a join key over `rows` rows: a stored column's sketch
// count (no more than the rows), else every row distinct (a key of a
// derived table or an expression is taken as unique, as a primary key is).
double FromPlanner::State::key_distinct(const Expr& key, double rows) {
  rows = std::max(rows, 1.0);
  const auto* column = dynamic_cast<const ColumnExpr*>(&key);
  if (column == nullptr) return rows;
  auto where = table_columns.find(column->index);
  if (where == table_columns.end()) return rows;
  auto cached = distinct_cache.find(column->index);
  if (cached == distinct_cache.end()) {
    cached = distinct_cache.emplace(column->index, sketch_distinct(*where->second.first, where->second.second)).first;
  }
  return cached->second ? std::clamp(*cached->second, 1.0, rows) : rows;
}

// Rows of the inner join of `a` and `b` over the unplaced equalities of
// `pool` between them (nullopt when none connects them): |a| |b| / d, d the
// larger side's distinct count of the key. A key of several columns has on
// each side the product of its columns' distinct counts, at most that
// side's rows: lineitem's rows of green parts against partsupp on part and
// supplier match about one partsupp row each, where their part alone would
// match four. Equalities of one class of equal columns (`classes`:
// l.partkey = ps.partkey and the implied p.partkey = ps.partkey) are one
// column of the key. A many-to-many equality (supplier and customer on
// their nation) so estimates the blow-up that joining by row counts alone
// misses.
std::optional<double> FromPlanner::State::join_estimate(const Part& a, const Part& b, const std::vector<Conjunct>& pool,
                                                        const EqualColumns& classes) {
  // Per key column (its class, or its own number): each side's distinct count.
  std::map<int, std::pair<double, double>> distinct;
  int unclassed = -1;
  for (const auto& c : pool) {
    const Expr* ak = nullptr;
    const Expr* bk = nullptr;
    if (!equality_sides(c, a.cols, b.cols, ak, bk)) continue;
    const int cls = equality_class(c, classes);
    auto& d = distinct.try_emplace(cls >= 0 ? cls : --unclassed, 1.0, 1.0).first->second;
    d.first = std::max(d.first, key_distinct(*ak, a.est));
    d.second = std::max(d.second, key_distinct(*bk, b.est));
  }
  if (distinct.empty()) return std::nullopt;
  double da = 1, db = 1;
  for (const auto& [cls, d] : distinct) {
    da *= d.first;
    db *= d.second;
  }
  da = std::min(da, std::max(a.est, 1.0));
  db = std::min(db, std::max(b.est, 1.0));
  return std::max(1.0, a.est * b.est / std::max(da, db));
}

std::vector<size_t> FromPlanner::State::cheapest_order(const std::vector<Part>& parts, const std::vector<Conjunct>& pool,
                                                       const EqualColumns& classes) {
  std::vector<JoinItem> items;
  for (const Part& p : parts) {
    const auto width = std::count_if(p.cols.begin(), p.cols.end(), [&](int c) { return used.count(c) > 0; });
    items.push_back({p.cols, p.est, std::max(1.0, static_cast<double>(width))});
  }
  return cheapest_join_order(items, [&](const JoinItem& a, const JoinItem& b) {
    return join_estimate(Part{nullptr, a.cols, a.est}, Part{nullptr, b.cols, b.est}, pool, classes);
  });
}

std::unique_ptr<PhysicalOperator> FromPlanner::State::build_tree(Node* node, std::vector<Conjunct> pool) {
  // Inner joins and comma lists are one set of items joined in any order.
  std::vector<Node*> items;
  std::function<void(Node*)> flatten = [&](Node* n) {
    if (n->kind == NodeKind::join && n->join == JoinType::inner) {
      flatten(n->left.get());
      flatten(n->right.get());
      for (auto& e : n->on) pool.push_back(make_conjunct(std::move(e)));
      n->on.clear();
      return;
    }
    items.push_back(n);
  };
  flatten(node);
  std::vector<std::set<int>> item_cols;
  for (const Node* item : items) item_cols.push_back(item->cols);
  const EqualColumns classes = equal_columns(pool);
  const size_t implied = add_implied_equalities(pool, item_cols, classes);
  for (size_t i = pool.size() - implied; i < pool.size(); ++i) consumed.add(*pool[i].expr);
  for (auto& c : pool) {
    if (c.refs.empty()) continue;
    for (Node* item : items) {
      if (subset(c.refs, item->cols)) {
        // An outer or lateral join passes it down or consumes it itself.
        if (item->kind != NodeKind::join && item->kind != NodeKind::lateral) consumed.consume(*c.expr);
        item->filters.push_back(std::move(c.expr));
        c.placed = true;
        break;
      }
    }
  }
  std::vector<Part> parts;
  for (Node* item : items) parts.push_back(build_item(item));
  const std::vector<size_t> order = cheapest_order(parts, pool, classes);
  Part current = std::move(parts[order[0]]);
  for (size_t step = 1; step < order.size(); ++step) {
    Part next = std::move(parts[order[step]]);
    const std::optional<double> pick_est = join_estimate(current, next, pool, classes);
    const bool connected = pick_est.has_value();
    const bool current_builds = current.est <= next.est;
    Part& probe = current_builds ? next : current;
    Part& build = current_builds ? current : next;
    std::set<int> both = probe.cols;
    both.insert(build.cols.begin(), build.cols.end());
    std::vector<ExprPtr> probe_keys, build_keys, residual;
    // The columns of each class of equal columns that a key of this join
    // takes. A joined part's columns of one class are equal already (the join
    // that joined them took a key of that class); an item's are not, unless
    // they are one column. An equality whose sides are so equal to a key's
    // is not another key.
    std::map<int, std::set<int>> keyed;
    auto equal_already = [&](const Conjunct& c) {
      const auto at = keyed.find(equality_class(c, classes));
      if (at == keyed.end()) return false;
      for (const int column : c.refs) {
        const Part& side = probe.cols.count(column) ? probe : build;
        if (!side.joined && !at->second.count(column)) return false;
      }
      return true;
    };
    for (auto& c : pool) {
      if (c.placed || c.refs.empty() || !subset(c.refs, both)) continue;
      consumed.consume(*c.expr);
      if (equal_already(c)) {
        c.placed = true;
        continue;
      }
      const int cls = equality_class(c, classes);
      ExprPtr pk, bk;
      if (take_equality(c, probe.cols, build.cols, pk, bk)) {
        if (cls >= 0) keyed[cls].insert(c.refs.begin(), c.refs.end());
        probe_keys.push_back(std::move(pk));
        build_keys.push_back(std::move(bk));
      } else {
        residual.push_back(std::move(c.expr));
        c.placed = true;
      }
    }
    const double est = connected ? *pick_est : probe.est * build.est;
    Part joined;
    joined.cols = std::move(both);
    joined.est = est;
    joined.joined = true;
    auto join = std::make_unique<HashJoin>(JoinKind::inner, std::move(probe.op), std::move(build.op),
                                           std::move(probe_keys), std::move(build_keys), ordered(std::move(residual)),
                                           width, est);
    join->keep_outputs(consumed.needed(joined.cols));
    joined.op = std::move(join);
    current = std::move(joined);
  }
  // What reads no column of the rows is tested once, before any row is read.
  std::vector<ExprPtr> rest, once;
  for (auto& c : pool) {
    if (c.placed) continue;
    (is_one_time_condition(*c.expr) ? once : rest).push_back(std::move(c.expr));
  }
  std::unique_ptr<PhysicalOperator> op = with_filters(std::move(current.op), std::move(rest));
  if (once.empty()) return op;
  return std::make_unique<OneTimeFilter>(std::move(op), ordered(std::move(once)), width);
}

FromPlanner::FromPlanner(PlanContext& plan_context, SublinkHookFactory sublink_hook)
    : state_(std::make_unique<State>(plan_context, std::move(sublink_hook))) {}

FromPlanner::~FromPlanner() = default;

size_t FromPlanner::width() const { return state_->width; }

void FromPlanner::begin(const json& select, BindContext& context) {
  State& s = *state_;
  s.context = &context;
  auto scope = std::make_unique<RelationScope>();
  context.relations = scope.get();
  s.root = s.from_list(select["fromClause"], *scope, context);
  context.columns.clear();
  for (const auto& c : scope->columns()) context.columns.push_back({c.name, c.type});
  s.scopes.push_back(std::move(scope));
  if (!select.contains("whereClause")) return;
  std::vector<json> parts;
  split_and(select["whereClause"], parts);
  BindContext where = context;
  where.aggregate_forbidden_reason = "aggregate functions are not allowed in WHERE";
  where.window_forbidden_reason = "window functions are not allowed in WHERE";
  for (const auto& p : parts) {
    if (s.try_semi_join(p, context)) continue;
    s.where.push_back(make_conjunct(bind_condition(p, where, "WHERE")));
    s.add_implied_filters(p, where);
  }
}

// An OR over several relations implies, for each relation every branch
// restricts, the OR of those restrictions: (n1.a = 'X' AND n2.a = 'Y') OR
// (n1.a = 'Y' AND n2.a = 'X') implies n1.a = 'X' OR n1.a = 'Y' (TPC-H Q7).
// Such a filter is added beside the OR (which stays) so the scan drops rows
// early; only relations joined by inner joins get one, where it cannot turn
// a matched row into a NULL-extended one.
void FromPlanner::State::add_implied_filters(const json& node, BindContext& ctx) {
  if (!node.contains("BoolExpr") || node["BoolExpr"].value("boolop", "") != "OR_EXPR" || contains_sublink_node(node)) return;
  std::vector<Node*> leaves;
  std::function<void(Node*)> inner_leaves = [&](Node* n) {
    if (n->kind == NodeKind::join && n->join == JoinType::inner) {
      inner_leaves(n->left.get());
      inner_leaves(n->right.get());
    } else if (n->kind != NodeKind::join) {
      leaves.push_back(n);
    }
  };
  inner_leaves(root.get());
  std::vector<std::vector<std::pair<json, std::set<int>>>> branches;
  for (const auto& arg : node["BoolExpr"]["args"]) {
    std::vector<json> conjuncts;
    split_and(arg, conjuncts);
    branches.emplace_back();
    for (const auto& c : conjuncts) {
      std::set<int> refs;
      collect_refs(*bind_condition(c, ctx, "WHERE"), refs);
      branches.back().emplace_back(c, std::move(refs));
    }
  }
  for (Node* leaf : leaves) {
    json any = json::array();
    for (const auto& branch : branches) {
      json mine = json::array();
      for (const auto& [c, refs] : branch) {
        if (!refs.empty() && subset(refs, leaf->cols)) mine.push_back(c);
      }
      if (mine.empty()) break;
      any.push_back(mine.size() == 1 ? mine[0] : json{{"BoolExpr", {{"boolop", "AND_EXPR"}, {"args", mine}}}});
    }
    if (any.size() != branches.size()) continue;
    where.push_back(make_conjunct(bind_condition(json{{"BoolExpr", {{"boolop", "OR_EXPR"}, {"args", any}}}}, ctx, "WHERE")));
  }
}

std::unique_ptr<PhysicalOperator> FromPlanner::finish() {
  State& s = *state_;
  for (const auto& scope : s.scopes) s.used.insert(scope->used().begin(), scope->used().end());
  for (const auto& c : s.where) s.used.insert(c.refs.begin(), c.refs.end());
  for (const auto& semi : s.semis) {
    for (const auto& c : semi.conjuncts) s.used.insert(c.refs.begin(), c.refs.end());
  }
  auto op = s.build_tree(s.root.get(), std::move(s.where));
  const std::set<int> outer_cols = s.root->cols;
  for (auto& semi : s.semis) {
    std::vector<Conjunct> inner_pool, conditions;
    for (auto& c : semi.conjuncts) {
      if (subset(c.refs, semi.root->cols)) inner_pool.push_back(std::move(c));
      else conditions.push_back(std::move(c));
    }
    auto build = s.build_tree(semi.root.get(), std::move(inner_pool));
    std::vector<ExprPtr> probe_keys, build_keys, residual;
    for (auto& c : conditions) {
      ExprPtr pk, bk;
      if (take_equality(c, outer_cols, semi.root->cols, pk, bk)) {
        probe_keys.push_back(std::move(pk));
        build_keys.push_back(std::move(bk));
      } else {
        residual.push_back(std::move(c.expr));
      }
    }
    const double est = op->estimated_rows() * 0.5;
    op = std::make_unique<HashJoin>(semi.kind, std::move(op), std::move(build), std::move(probe_keys),
                                    std::move(build_keys), ordered(std::move(residual)), s.width, est);
  }
  return op;
}

}  // namespace tally::executor
