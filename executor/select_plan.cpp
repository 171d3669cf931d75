// SELECT planning: binds a SelectStmt into an immutable SelectPlan (its
// outputs known before any row is read) and describes its result columns.
#include "executor/select_plan.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "common/error.hpp"
#include "executor/system_relation_provider.hpp"
#include "executor/aggregate_function.hpp"
#include "executor/binder.hpp"
#include "executor/distinct_count_rewrite.hpp"
#include "executor/distinct_grouping.hpp"
#include "executor/dependent_group_columns.hpp"
#include "executor/eager_aggregation.hpp"
#include "executor/lateral_top_n.hpp"
#include "executor/from_planner.hpp"
#include "executor/operators/physical_operator.hpp"
#include "executor/operators/top_n_per_partition.hpp"
#include "executor/operators/window.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/project_set.hpp"
#include "executor/row_locks.hpp"
#include "executor/scalar/function_support.hpp"
#include "executor/scalar/prewarm_function.hpp"
#include "executor/scalar/relation_size_functions.hpp"
#include "executor/subquery_binder.hpp"
#include "executor/group_aggregator.hpp"
#include "executor/grouping_sets.hpp"
#include "executor/lookup_join.hpp"
#include "executor/lookup_rewrite.hpp"
#include "executor/percentile_arrays.hpp"
#include "executor/sum_rewrites.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/set_operation_plan.hpp"
#include "executor/shared_cte.hpp"
#include "executor/settings.hpp"
#include "executor/table_provider.hpp"
#include "executor/view_expansion.hpp"
#include "executor/value_codec.hpp"
#include "executor/window_binder.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

int location_in(const json& node) {
  if (node.is_object()) {
    for (auto& [k, v] : node.items()) {
      if (v.is_object() && v.contains("location")) return v["location"].get<int>();
    }
  }
  return -1;
}

// Where an expression starts, as PostgreSQL's exprLocation points: the
// smallest location in its tree (an operator's own is that of its symbol).
int leftmost_location(const json& node) {
  int best = -1;
  auto take = [&best](int loc) {
    if (loc >= 0 && (best < 0 || loc < best)) best = loc;
  };
  if (node.is_object()) {
    for (auto& [k, v] : node.items()) {
      if (k == "location" && v.is_number_integer()) take(v.get<int>());
      else if (v.is_structured()) take(leftmost_location(v));
    }
  } else if (node.is_array()) {
    for (const auto& v : node) take(leftmost_location(v));
  }
  return best;
}

Error positioned(Error e, const json& node) {
  const int loc = location_in(node);
  if (loc >= 0 && e.position() == 0) e.with_position(loc + 1);
  return e;
}

bool contains_aggregate(const json& node) {
  if (node.is_object()) {
    if (node.contains("FuncCall")) {
      const auto& names = node["FuncCall"]["funcname"];
      const std::string name = names[names.size() - 1]["String"].value("sval", "");
      if (is_aggregate_name(name) && !node["FuncCall"].contains("over")) return true;
    }
    if (node.contains("SubLink")) return false;
    for (auto& [k, v] : node.items()) {
      if (contains_aggregate(v)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (contains_aggregate(v)) return true;
    }
  }
  return false;
}

void collect_columns(const Expr& e, std::set<int>& out) {
  if (auto* c = dynamic_cast<const ColumnExpr*>(&e)) { out.insert(c->index); return; }
  if (auto* f = dynamic_cast<const FunctionExpr*>(&e)) { for (auto& a : f->args) collect_columns(*a, out); return; }
  if (auto* b = dynamic_cast<const BoolExpr*>(&e)) { for (auto& a : b->args) collect_columns(*a, out); return; }
  if (auto* n = dynamic_cast<const NullTestExpr*>(&e)) { collect_columns(*n->arg, out); return; }
  if (auto* l = dynamic_cast<const LookupExpr*>(&e)) { collect_columns(*l->key, out); return; }
  if (auto* c = dynamic_cast<const CaseExpr*>(&e)) {
    for (auto& [w, v] : c->whens) { collect_columns(*w, out); collect_columns(*v, out); }
    if (c->otherwise) collect_columns(*c->otherwise, out);
    return;
  }
  if (auto* c = dynamic_cast<const CoalesceExpr*>(&e)) { for (auto& a : c->args) collect_columns(*a, out); return; }
  if (auto* i = dynamic_cast<const InListExpr*>(&e)) {
    collect_columns(*i->arg, out);
    for (auto& a : i->list) collect_columns(*a, out);
  }
}

struct TargetEntry {
  json node;
  std::string name;
  bool star_column = false;
  int star_index = -1;
};

bool names_cte(const PlanContext& pc, const json& range_var) {
  if (range_var.contains("schemaname")) return false;
  const std::string name = range_var.value("relname", "");
  return std::any_of(pc.ctes.begin(), pc.ctes.end(), [&](const WithQuery& cte) { return cte.name == name; }) ||
         std::any_of(pc.cte_relations.begin(), pc.cte_relations.end(), [&](const auto& cte) { return cte.first == name; });
}

// A FROM item that names a catalog relation (not shadowed by a user table):
// only the operator engine scans those.
bool names_system_relation(const PlanContext& pc, const json& range_var) {
  if (pc.system_relations == nullptr) return false;
  const std::string schema = range_var.value("schemaname", "");
  const std::string name = range_var.value("relname", "");
  if ((schema.empty() || schema == "public") && pc.tables != nullptr && pc.tables->find_table(schema, name)) return false;
  return pc.system_relations->find(schema, name) != nullptr;
}

// Whether the SELECT needs the operator engine: anything but one stored table
// (or none) without subqueries or window functions (the direct scan path).
bool needs_operators(const json& select, const PlanContext& pc) {
  if (pc.outer_column || select.contains("withClause")) return true;
  if (select.contains("fromClause") &&
      (has_window_call(select.value("targetList", json::array())) || has_window_call(select.value("sortClause", json::array())))) {
    return true;
  }
  if (select.contains("fromClause")) {
    const auto& from = select["fromClause"];
    if (from.size() != 1 || !from[0].contains("RangeVar") || names_cte(pc, from[0]["RangeVar"]) ||
        names_system_relation(pc, from[0]["RangeVar"]) || names_view(pc, from[0]["RangeVar"])) {
      return true;
    }
  }
  return contains_sublink_node(select);
}

json column_ref_node(const ScopedColumn& c) {
  json fields = json::array();
  if (!c.relation.empty()) fields.push_back(json{{"String", {{"sval", c.relation}}}});
  fields.push_back(json{{"String", {{"sval", c.name}}}});
  return json{{"ColumnRef", {{"fields", fields}}}};
}

// Top-level unknown literals/parameters in the target list become text.
ExprPtr resolve_output_unknown(ExprPtr e, BindContext& ctx, bool keep_unknown) {
  if (e->type.id == TypeId::unknown && !keep_unknown) return coerce_to(std::move(e), {TypeId::text}, CastContext::implicit, ctx);
  return e;
}

// The ranking call that output `output` reads, when the plan's windows may
// run as a top-n of it: nothing between the windows and the outer filter
// (LIMIT, OFFSET, DISTINCT) depends on the rows the bound drops.
std::optional<size_t> top_n_call(const SelectPlan& plan, const WindowPlan& windows, int output) {
  if (output < 0 || static_cast<size_t>(output) >= plan.visible) return std::nullopt;
  if (plan.limit || plan.offset || plan.distinct || !plan.distinct_on.empty()) return std::nullopt;
  const auto* result = dynamic_cast<const WindowResultExpr*>(plan.outputs[static_cast<size_t>(output)].get());
  if (result == nullptr || !top_n_applies(windows, result->call())) return std::nullopt;
  return result->call();
}

}  // namespace

void base_context(BindContext& ctx, const PlanContext& pc) {
  ctx.parameter_types = pc.parameter_types;
  ctx.settings = pc.settings;
  ctx.session_user = pc.user;
  ctx.database = pc.database;
  ctx.backend_pid = pc.backend_pid;
  ctx.transaction_time_us = pc.transaction_time_us;
  ctx.sequences = pc.sequences;
  // Functions of a table named by a literal (pg_relation_size('t'::regclass),
  // pg_prewarm('t')) bind here, where tables are known.
  if (TableProvider* tables = pc.tables) {
    ctx.intercept = [tables](const json& node) {
      ExprPtr e = bind_relation_size_call(node, *tables);
      return e ? std::move(e) : bind_prewarm_call(node, *tables);
    };
  }
}

int order_by_position(const json& node, size_t outputs, const char* clause) {
  if (!node.contains("A_Const")) return -1;
  // Any other constant would sort or group by nothing: PostgreSQL refuses it.
  if (!node["A_Const"].contains("ival")) {
    throw positioned(Error(SqlState::syntax_error, std::string("non-integer constant in ") + clause), node);
  }
  const int64_t ordinal = node["A_Const"]["ival"].value("ival", int64_t{0});
  if (ordinal < 1 || ordinal > static_cast<int64_t>(outputs)) {
    throw positioned(Error(SqlState::invalid_column_reference,
                           std::string(clause) + " position " + std::to_string(ordinal) + " is not in select list"),
                     node);
  }
  return static_cast<int>(ordinal - 1);
}

void bind_limit_offset(const json& select, PlanContext& pc, SelectPlan& plan) {
  BindContext limit_ctx;
  base_context(limit_ctx, pc);
  limit_ctx.aggregate_forbidden_reason = "aggregate functions are not allowed in LIMIT";
  if (select.contains("limitCount")) {
    const auto& node = select["limitCount"];
    if (!(node.contains("A_Const") && node["A_Const"].value("isnull", false))) {
      plan.limit = coerce_to(bind_expression(node, limit_ctx), {TypeId::int8}, CastContext::implicit, limit_ctx);
    }
  }
  if (select.contains("limitOffset")) {
    plan.offset = coerce_to(bind_expression(select["limitOffset"], limit_ctx), {TypeId::int8}, CastContext::implicit, limit_ctx);
  }
}

namespace {
std::shared_ptr<const SelectPlan> plan_select_in(const json& select, PlanContext& outer_pc);
}  // namespace

// Queries nested deeper than this (derived tables, subqueries, set
// operation branches) are refused as PostgreSQL refuses what would exceed
// its stack: each level is a few kilobytes of the session thread's stack.
constexpr int kMaxNestedQueries = 1000;
thread_local int nested_queries = 0;

std::shared_ptr<const SelectPlan> plan_select(const json& select, PlanContext& pc) {
  struct Nesting {
    Nesting() {
      if (++nested_queries > kMaxNestedQueries) {
        --nested_queries;
        throw Error(SqlState::statement_too_complex, "stack depth limit exceeded")
            .with_hint("Tally plans at most " + std::to_string(kMaxNestedQueries) + " nested queries.");
      }
    }
    ~Nesting() { --nested_queries; }
  } nesting;
  if (std::optional<json> expanded = expand_percentile_arrays(select)) return plan_select(*expanded, pc);
  if (std::optional<json> grouped = distinct_as_grouping(select)) return plan_select(*grouped, pc);
  if (std::optional<json> eager = eager_aggregation(select, pc)) return plan_select(*eager, pc);
  if (std::optional<json> fetched = dependent_group_columns(select, pc)) return plan_select(*fetched, pc);
  if (std::optional<json> ranked = lateral_top_n(select, pc)) return plan_select(*ranked, pc);
  if (std::shared_ptr<const SelectPlan> counts = plan_distinct_counts(select, pc)) return counts;
  // A subquery over one stored table is planned as a top-level query is
  // (its GROUP BY on the engine's path over the stored chunks, with the
  // table's statistics) unless it reads a column of the enclosing query:
  // planned without the enclosing query's columns first, it names one only
  // if that fails with 42703 or 42P01, and is then planned over the operators.
  if (pc.outer_column) {
    PlanContext alone = pc;
    alone.outer_column = nullptr;
    if (!needs_operators(select, alone)) {
      try {
        auto plan = plan_select_in(select, alone);
        pc.keep_unknown_outputs = false;
        pc.top_n_output = -1;
        pc.keep_distinct_counts = false;
        return plan;
      } catch (const Error& e) {
        if (e.state() != SqlState::undefined_column && e.state() != SqlState::undefined_table) throw;
      }
    }
  }
  return plan_select_in(select, pc);
}

namespace {

std::shared_ptr<const SelectPlan> plan_select_in(const json& select, PlanContext& outer_pc) {
  const bool keep_unknown = std::exchange(outer_pc.keep_unknown_outputs, false);
  const int top_n_output = std::exchange(outer_pc.top_n_output, -1);
  outer_pc.keep_distinct_counts = false;
  const int64_t top_n_k = outer_pc.top_n_k;
  auto plan = std::make_shared<SelectPlan>();
  PlanContext with_pc;
  std::vector<std::shared_ptr<const SharedCte>> shared_ctes;
  if (select.contains("withClause")) {
    with_pc = outer_pc;
    shared_ctes = add_with_queries(select, with_pc);
  }
  // The plans below are this SELECT's own, made here: the WITH queries
  // they share are theirs to reset when they run.
  const auto owning = [&shared_ctes](std::shared_ptr<const SelectPlan> made) {
    if (!shared_ctes.empty()) std::const_pointer_cast<SelectPlan>(made)->shared_ctes = shared_ctes;
    return made;
  };
  PlanContext& pc = select.contains("withClause") ? with_pc : outer_pc;
  if (select.contains("lockingClause")) check_locking_clause(select);
  if (select.value("op", "SETOP_NONE") != "SETOP_NONE") return owning(plan_set_operation(select, pc));
  if (select.contains("valuesLists")) return owning(plan_values(select, pc));
  if (has_set_returning_target(select)) return owning(plan_project_set(select, pc));
  plan->shared_ctes = shared_ctes;
  const bool operators = needs_operators(select, pc);
  // SELECT DISTINCT is a distinct clause of one empty item; DISTINCT ON lists its expressions.
  const json* distinct_on = nullptr;
  if (select.contains("distinctClause")) {
    const auto& d = select["distinctClause"];
    if (d.size() == 1 && d[0].empty()) plan->distinct = true;
    else distinct_on = &d;
  }

  BindContext source;
  base_context(source, pc);
  WindowBinder windows(select);
  SelectPlan* raw_plan = plan.get();
  const SublinkHookFactory sublink_hook = [&pc, raw_plan](BindContext* scope) {
    return [scope, &pc, raw_plan](const json& link) { return bind_sublink(link, *scope, pc, raw_plan->subqueries); };
  };
  std::unique_ptr<FromPlanner> from;
  if (operators) {
    source.outer_column = pc.outer_column;
    source.on_sublink = sublink_hook(&source);
    if (select.contains("fromClause")) {
      from = std::make_unique<FromPlanner>(pc, sublink_hook);
      from->begin(select, source);
    }
  } else if (select.contains("fromClause")) {
    const auto& from = select["fromClause"];
    if (from.size() != 1 || !from[0].contains("RangeVar")) {
      throw Error(SqlState::feature_not_supported, "joins and subqueries in FROM are not supported");
    }
    const auto& rv = from[0]["RangeVar"];
    const std::string schema = rv.value("schemaname", "");
    const std::string name = rv.value("relname", "");
    if (!rv.value("inh", true)) {}
    std::shared_ptr<const TableSnapshot> table;
    if (pc.tables != nullptr && (schema.empty() || schema == "public")) table = pc.tables->find_table(schema, name);
    if (!table) {
      Error e(SqlState::undefined_table,
              "relation \"" + (schema.empty() ? name : schema + "." + name) + "\" does not exist");
      if (rv.contains("location")) e.with_position(rv["location"].get<int>() + 1);
      throw e;
    }
    plan->table = table;
    source.table_name = name;
    if (rv.contains("alias")) {
      const auto& alias = rv["alias"].contains("Alias") ? rv["alias"]["Alias"] : rv["alias"];
      source.table_name = alias.value("aliasname", name);
    }
    for (const auto& c : table->columns()) source.columns.push_back({c.name, c.type});
  }

  // Target list, with * expanded.
  std::vector<TargetEntry> targets;
  for (const auto& t : select.value("targetList", json::array())) {
    const auto& rt = t["ResTarget"];
    const json& val = rt["val"];
    if (val.contains("ColumnRef")) {
      const auto& fields = val["ColumnRef"]["fields"];
      if (fields[fields.size() - 1].contains("A_Star") && source.relations != nullptr) {
        const std::string relation = fields.size() >= 2 ? fields[fields.size() - 2]["String"].value("sval", "") : "";
        for (const auto& c : source.relations->star(relation)) {
          TargetEntry e;
          e.node = column_ref_node(c);
          e.name = c.name;
          targets.push_back(std::move(e));
        }
        continue;
      }
      if (fields[fields.size() - 1].contains("A_Star")) {
        if (!plan->table) {
          throw positioned(Error(SqlState::syntax_error, "SELECT * with no tables specified is not valid"), val);
        }
        for (size_t i = 0; i < source.columns.size(); ++i) {
          TargetEntry e;
          e.node = json{{"ColumnRef", {{"fields", json::array({json{{"String", {{"sval", source.columns[i].name}}}}})}}}};
          e.name = source.columns[i].name;
          e.star_column = true;
          e.star_index = static_cast<int>(i);
          targets.push_back(std::move(e));
        }
        continue;
      }
    }
    TargetEntry e;
    e.node = val;
    e.name = rt.contains("name") ? rt["name"].get<std::string>() : output_column_name(val);
    targets.push_back(std::move(e));
  }

  if (select.contains("whereClause") && !from) {
    BindContext where_ctx = source;
    where_ctx.aggregate_forbidden_reason = "aggregate functions are not allowed in WHERE";
    where_ctx.window_forbidden_reason = "window functions are not allowed in WHERE";
    plan->where = bind_condition(select["whereClause"], where_ctx, "WHERE");
  }

  const bool has_group = select.contains("groupClause");
  bool aggregate = has_group || contains_aggregate(select.value("targetList", json::array())) ||
                   select.contains("havingClause");
  if (!aggregate && select.contains("sortClause")) {
    aggregate = contains_aggregate(select["sortClause"]);
  }
  plan->aggregate = aggregate;

  // Sort items resolved against output names/ordinals first (ORDER BY's rule).
  auto output_index_for = [&](const json& node, const char* clause = "ORDER BY") -> int {
    if (const int position = order_by_position(node, targets.size(), clause); position >= 0) return position;
    if (node.contains("ColumnRef")) {
      const auto& fields = node["ColumnRef"]["fields"];
      if (fields.size() == 1 && fields[0].contains("String")) {
        const std::string name = fields[0]["String"].value("sval", "");
        int found = -1;
        for (size_t i = 0; i < targets.size(); ++i) {
          if (targets[i].name == name) {
            if (found >= 0 && !equal_ignoring_locations(targets[static_cast<size_t>(found)].node, targets[i].node)) {
              throw positioned(Error(SqlState::ambiguous_column, "ORDER BY \"" + name + "\" is ambiguous"), node);
            }
            if (found < 0) found = static_cast<int>(i);
          }
        }
        return found;
      }
    }
    return -1;
  };

  // ORDER BY: an item naming an output (ordinal, alias or the same expression)
  // sorts by it; any other expression becomes a hidden output column, which
  // SELECT DISTINCT forbids (42P10), as in PostgreSQL.
  std::vector<std::pair<json, int>> hidden_sort;  // ORDER BY items bound as hidden outputs
  // DISTINCT ON items name outputs as ORDER BY items do, or match an ORDER
  // BY expression, or become hidden outputs; ORDER BY must start with them
  // (in any order), else 42P10 as in PostgreSQL.
  auto bind_distinct_on = [&](const json& items, BindContext& scope) {
    for (const auto& node : items) {
      int index = output_index_for(node, "DISTINCT ON");
      for (size_t i = 0; index < 0 && i < targets.size(); ++i) {
        if (equal_ignoring_locations(targets[i].node, node)) index = static_cast<int>(i);
      }
      for (const auto& [sorted, column] : hidden_sort) {
        if (index < 0 && equal_ignoring_locations(sorted, node)) index = column;
      }
      if (index < 0) {
        plan->outputs.push_back(bind_expression(node, scope));
        index = static_cast<int>(plan->outputs.size() - 1);
      }
      plan->distinct_on.push_back(index);
    }
    std::set<int> pending(plan->distinct_on.begin(), plan->distinct_on.end());
    for (const auto& key : plan->sort) {
      if (pending.empty()) break;
      if (pending.erase(key.column) == 0 &&
          std::find(plan->distinct_on.begin(), plan->distinct_on.end(), key.column) == plan->distinct_on.end()) {
        throw positioned(Error(SqlState::invalid_column_reference,
                               "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"),
                         items[0]);
      }
    }
  };

  auto bind_sort_clause = [&](BindContext& scope) {
    for (const auto& s : select.value("sortClause", json::array())) {
      const auto& sb = s["SortBy"];
      int index = output_index_for(sb["node"]);
      for (size_t i = 0; index < 0 && i < targets.size(); ++i) {
        if (equal_ignoring_locations(targets[i].node, sb["node"])) index = static_cast<int>(i);
      }
      if (index < 0) {
        if (plan->distinct) {
          throw positioned(Error(SqlState::invalid_column_reference,
                                 "for SELECT DISTINCT, ORDER BY expressions must appear in select list"),
                           sb["node"]);
        }
        plan->outputs.push_back(bind_expression(sb["node"], scope));
        index = static_cast<int>(plan->outputs.size() - 1);
        hidden_sort.emplace_back(sb["node"], index);
      }
      SortKey key;
      key.column = index;
      key.descending = sb.value("sortby_dir", "") == "SORTBY_DESC";
      const std::string nulls = sb.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
      key.nulls_first = nulls == "SORTBY_NULLS_FIRST" || (nulls == "SORTBY_NULLS_DEFAULT" && key.descending);
      plan->sort.push_back(key);
    }
    if (distinct_on != nullptr) bind_distinct_on(*distinct_on, scope);
  };

  if (!aggregate) {
    source.on_window = windows.hook(source);
    for (auto& t : targets) {
      plan->outputs.push_back(resolve_output_unknown(bind_expression(t.node, source), source, keep_unknown));
      plan->names.push_back(t.name);
    }
    plan->visible = plan->outputs.size();
    bind_sort_clause(source);
  } else {
    // GROUP BY keys: ordinals and output aliases resolve to target expressions,
    // input column names win over output aliases (PostgreSQL's rule).
    std::vector<json> key_nodes, resolved_keys;  // without locations / as written after resolution
    auto bind_key_node = [&](const json& node) {
      BindContext key_ctx = source;
      key_ctx.window_forbidden_reason = "window functions are not allowed in GROUP BY";
      ExprPtr key = bind_expression(node, key_ctx);
      if (key->type.id == TypeId::unknown) key = coerce_to(std::move(key), {TypeId::text}, CastContext::implicit, key_ctx);
      return key;
    };
    auto bind_key = [&](const json& g) -> int {
      json node = g;
      if (const int position = order_by_position(g, targets.size(), "GROUP BY"); position >= 0) {
        node = targets[static_cast<size_t>(position)].node;
      } else if (g.contains("ColumnRef")) {
        const auto& fields = g["ColumnRef"]["fields"];
        if (fields.size() == 1 && fields[0].contains("String")) {
          const std::string name = fields[0]["String"].value("sval", "");
          const bool is_input = std::any_of(source.columns.begin(), source.columns.end(),
                                            [&](const ScopeColumn& c) { return c.name == name; });
          if (!is_input) {
            for (const auto& t : targets) {
              if (t.name == name) { node = t.node; break; }
            }
          }
        }
      }
      if (contains_aggregate(node)) {
        throw positioned(Error(SqlState::grouping_error, "aggregate functions are not allowed in GROUP BY"), node);
      }
      for (size_t i = 0; i < key_nodes.size(); ++i) {
        if (equal_ignoring_locations(key_nodes[i], node)) return static_cast<int>(i);
      }
      plan->group_keys.push_back(bind_key_node(node));
      key_nodes.push_back(strip_locations(node));
      resolved_keys.push_back(node);
      return static_cast<int>(key_nodes.size() - 1);
    };
    const json group_clause = select.value("groupClause", json::array());
    if (has_grouping_sets(group_clause)) {
      GroupingSetList sets = expand_grouping_sets(group_clause, bind_key);
      if (select.value("groupDistinct", false)) remove_duplicate_sets(sets);
      for (auto& keys : sets) {
        SelectPlan::GroupingSet set;
        for (int k : keys) set.key_exprs.push_back(bind_key_node(resolved_keys[static_cast<size_t>(k)]));
        set.keys = std::move(keys);
        plan->grouping_sets.push_back(std::move(set));
      }
    } else {
      for (const auto& g : group_clause) bind_key(g);
    }
    std::vector<std::pair<ColumnExpr*, size_t>> grouping_refs;  // grouping() results, placed once aggregates are known

    // Post-aggregation binding: group expressions and aggregates become
    // references into the aggregation output [keys..., aggregates...].
    std::vector<json> aggregate_nodes;  // each aggregate's FuncCall body, without locations
    // grouping(a, ...): each argument must be a grouping key.
    auto bind_grouping_call = [&](const json& call) -> ExprPtr {
      std::vector<int> args;
      for (const auto& arg : call.value("args", json::array())) {
        int index = -1;
        for (size_t i = 0; index < 0 && i < key_nodes.size(); ++i) {
          if (equal_ignoring_locations(key_nodes[i], arg)) index = static_cast<int>(i);
        }
        if (index < 0 && arg.contains("ColumnRef")) {
          BindContext probe = source;
          ExprPtr col = bind_expression(arg, probe);
          auto* column = dynamic_cast<ColumnExpr*>(col.get());
          for (size_t i = 0; column != nullptr && index < 0 && i < plan->group_keys.size(); ++i) {
            auto* k = dynamic_cast<ColumnExpr*>(plan->group_keys[i].get());
            if (k != nullptr && k->index == column->index) index = static_cast<int>(i);
          }
        }
        if (index < 0) {
          throw positioned(Error(SqlState::grouping_error,
                                 "arguments to GROUPING must be grouping expressions of the associated query level"),
                           arg);
        }
        args.push_back(index);
      }
      plan->grouping_calls.push_back(std::move(args));
      auto ref = std::make_unique<ColumnExpr>(SqlType{TypeId::int4}, -1);
      grouping_refs.emplace_back(ref.get(), plan->grouping_calls.size() - 1);
      return ref;
    };
    BindContext post = source;
    post.columns = source.columns;  // ColumnRefs are resolved, then checked against the keys
    post.intercept = [&](const json& node) -> ExprPtr {
      if (node.contains("GroupingFunc")) return bind_grouping_call(node["GroupingFunc"]);
      for (size_t i = 0; i < key_nodes.size(); ++i) {
        if (equal_ignoring_locations(key_nodes[i], node)) return std::make_unique<ColumnExpr>(plan->group_keys[i]->type, static_cast<int>(i));
      }
      if (node.contains("ColumnRef")) {
        BindContext probe = source;
        ExprPtr col = bind_expression(node, probe);
        auto* column = dynamic_cast<ColumnExpr*>(col.get());
        if (column == nullptr) return col;  // the enclosing query's value: one per run
        const int index = column->index;
        for (size_t i = 0; i < plan->group_keys.size(); ++i) {
          auto* k = dynamic_cast<ColumnExpr*>(plan->group_keys[i].get());
          if (k != nullptr && k->index == index) return std::make_unique<ColumnExpr>(k->type, static_cast<int>(i));
        }
        const auto& fields = node["ColumnRef"]["fields"];
        std::string shown = source.relations != nullptr
                                ? source.relations->display_name(index)
                                : source.table_name + "." + source.columns[static_cast<size_t>(index)].name;
        (void)fields;
        throw positioned(Error(SqlState::grouping_error, "column \"" + shown +
                                                             "\" must appear in the GROUP BY clause or be used in an aggregate function"),
                         node);
      }
      return nullptr;
    };
    post.on_aggregate = [&](const json& call, const std::string& name) -> ExprPtr {
      for (size_t i = 0; i < aggregate_nodes.size(); ++i) {
        if (equal_ignoring_locations(aggregate_nodes[i], call)) {
          return std::make_unique<ColumnExpr>(plan->aggregates[i].signature.result_type,
                                              static_cast<int>(plan->group_keys.size() + i));
        }
      }
      BindContext inner = source;
      inner.aggregate_forbidden_reason = "aggregate function calls cannot be nested";
      inner.window_forbidden_state = SqlState::grouping_error;
      inner.window_forbidden_reason = "aggregate function calls cannot contain window function calls";
      AggregateCall agg;
      agg.name = name;
      agg.distinct = call.value("agg_distinct", false);
      const bool star = call.value("agg_star", false);
      const bool within = call.value("agg_within_group", false);
      std::vector<SqlType> arg_types;
      std::vector<AggregateOrderKey> order_keys;
      if (within) {
        const auto& order = call["agg_order"];
        if (order.size() != 1) throw Error(SqlState::feature_not_supported, "ordered-set aggregates take one sort expression");
        const auto& sb = order[0]["SortBy"];
        agg.args.push_back(bind_expression(sb["node"], inner));
        agg.descending = sb.value("sortby_dir", "") == "SORTBY_DESC";
        if (name != "mode") {
          const auto& direct = call.value("args", json::array());
          if (direct.size() != 1) throw Error(SqlState::undefined_function, "function " + name + " with these arguments does not exist");
          BindContext direct_ctx;
          base_context(direct_ctx, pc);
          ExprPtr d = coerce_to(bind_expression(direct[0], direct_ctx), {TypeId::float8}, CastContext::implicit, direct_ctx);
          agg.direct = std::move(d);
        } else if (call.contains("args")) {
          throw Error(SqlState::undefined_function, "function mode with arguments does not exist");
        }
      } else {
        for (const auto& a : call.value("args", json::array())) agg.args.push_back(bind_expression(a, inner));
        const std::optional<size_t> arity = ordered_input_arity(name);
        if (arity && agg.args.size() != *arity) throw scalar::no_function(name, agg.args);
        const json& order = call.contains("agg_order") ? call["agg_order"] : json::array();
        if (agg.distinct) {
          // PostgreSQL sorts a DISTINCT aggregate's input by its arguments.
          for (const auto& item : order) {
            const json& key = item["SortBy"]["node"];
            bool among = false;
            for (const auto& a : call.value("args", json::array())) among = among || equal_ignoring_locations(a, key);
            if (!among) {
              throw Error(SqlState::invalid_column_reference,
                          "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list")
                  .with_position(leftmost_location(key) + 1);
            }
          }
        }
        if (arity) {
          // The order of the input: its keys are the accumulator's arguments after the aggregate's own.
          for (const auto& item : order) {
            const auto& sb = item["SortBy"];
            if (sb.contains("useOp")) throw Error(SqlState::feature_not_supported, name + " with ORDER BY ... USING is not supported");
            AggregateOrderKey key;
            key.descending = sb.value("sortby_dir", "") == "SORTBY_DESC";
            const std::string nulls = sb.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
            key.nulls_first = nulls == "SORTBY_NULLS_FIRST" || (nulls == "SORTBY_NULLS_DEFAULT" && key.descending);
            agg.args.push_back(bind_expression(sb["node"], inner));
            order_keys.push_back(key);
          }
        }
        // ORDER BY inside an order-insensitive aggregate does not change its result.
      }
      for (const auto& a : agg.args) arg_types.push_back(a->type);
      agg.signature = resolve_aggregate(name, arg_types, star, within);
      agg.signature.order = std::move(order_keys);
      for (size_t i = 0; i < agg.args.size(); ++i) {
        agg.args[i] = coerce_to(std::move(agg.args[i]), agg.signature.arg_types[i], CastContext::implicit, inner);
      }
      if (call.contains("agg_filter")) {
        BindContext filter_ctx = inner;
        filter_ctx.aggregate_forbidden_reason = "aggregate functions are not allowed in FILTER";
        agg.filter = bind_condition(call["agg_filter"], filter_ctx, "FILTER");
      }
      aggregate_nodes.push_back(strip_locations(call));
      plan->aggregates.push_back(std::move(agg));
      return std::make_unique<ColumnExpr>(plan->aggregates.back().signature.result_type,
                                          static_cast<int>(plan->group_keys.size() + plan->aggregates.size() - 1));
    };
    // A subquery after grouping sees the groups, not the rows: what it reads
    // of this query binds as the outputs do (a GROUP BY key, else 42803).
    BindContext grouped;
    base_context(grouped, pc);
    grouped.outer_column = [&post](const json& node) -> ExprPtr { return bind_expression(node, post); };
    if (operators) post.on_sublink = sublink_hook(&grouped);
    // Windows run over the groups: in the outputs and ORDER BY, not in HAVING.
    post.on_window = windows.hook(post);
    for (auto& t : targets) {
      plan->outputs.push_back(resolve_output_unknown(bind_expression(t.node, post), post, keep_unknown));
      plan->names.push_back(t.name);
    }
    plan->visible = plan->outputs.size();
    if (select.contains("havingClause")) {
      BindContext having = post;
      having.on_window = nullptr;
      having.window_forbidden_reason = "window functions are not allowed in HAVING";
      plan->having = bind_condition(select["havingClause"], having, "HAVING");
    }
    bind_sort_clause(post);
    if (windows.empty()) rewrite_sums(*plan, post);
    for (auto& [ref, call] : grouping_refs) ref->index = static_cast<int>(plan->group_keys.size() + plan->aggregates.size() + call);
    if (!plan->grouping_calls.empty() && plan->grouping_sets.empty()) {
      // grouping() under a plain GROUP BY: one set of every key (it is 0).
      SelectPlan::GroupingSet set;
      for (size_t k = 0; k < resolved_keys.size(); ++k) {
        set.keys.push_back(static_cast<int>(k));
        set.key_exprs.push_back(bind_key_node(resolved_keys[k]));
      }
      plan->grouping_sets.push_back(std::move(set));
    }
  }

  bind_limit_offset(select, pc, *plan);

  if (!windows.empty() && (aggregate || !from)) {
    plan->windows = windows.finish(aggregate ? plan->group_keys.size() + plan->aggregates.size() : 0);
  }
  if (from) {
    std::unique_ptr<PhysicalOperator> source_tree = from->finish();
    plan->source_width = from->width();
    if (!windows.empty() && !aggregate) {
      auto window_plan = windows.finish(plan->source_width);
      const size_t calls = window_plan->calls.size();
      const std::optional<size_t> top_n = top_n_call(*plan, *window_plan, top_n_output);
      if (top_n) {
        std::optional<TopNGroups> groups = plan_top_n_groups(select, pc, *source_tree, *window_plan, *top_n, top_n_k);
        source_tree = std::make_unique<TopNPerPartition>(std::move(source_tree), std::move(window_plan),
                                                         plan->source_width, *top_n, top_n_k, std::move(groups));
      } else {
        source_tree = std::make_unique<WindowOperator>(std::move(source_tree), std::move(window_plan), plan->source_width);
      }
      plan->source_width += calls;
    }
    plan->source = std::move(source_tree);
    BindContext bind;
    base_context(bind, pc);
    plan->lookup_form = plan_lookup_form(*plan, bind);
    return plan;
  }
  // Which table columns the scan must read.
  std::set<int> used;
  if (plan->where) collect_columns(*plan->where, used);
  if (plan->aggregate) {
    for (const auto& k : plan->group_keys) collect_columns(*k, used);
    for (const auto& a : plan->aggregates) {
      for (const auto& e : a.args) collect_columns(*e, used);
      if (a.filter) collect_columns(*a.filter, used);
    }
  } else {
    for (const auto& o : plan->outputs) collect_columns(*o, used);
  }
  plan->scan_columns.assign(used.begin(), used.end());
  return plan;
}

}  // namespace

const std::shared_ptr<const TableSnapshot>& select_table(const SelectPlan& plan) { return plan.table; }

std::vector<tally::FieldDescription> select_fields(const SelectPlan& plan) {
  std::vector<tally::FieldDescription> fields;
  for (size_t i = 0; i < plan.visible; ++i) {
    auto f = describe_column(plan.names[i], plan.outputs[i]->type);
    if (auto* c = dynamic_cast<const ColumnExpr*>(plan.outputs[i].get()); c && plan.table && !plan.aggregate) {
      f.table_oid = plan.table->oid();
      f.column_number = static_cast<int16_t>(c->index + 1);
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

}  // namespace tally::executor
