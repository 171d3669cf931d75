#include "executor/plan_expressions.hpp"

#include "executor/lookup_join.hpp"

#include <algorithm>
#include <string_view>
#include <variant>

#include "common/error.hpp"
#include "executor/expression_copy.hpp"
#include "executor/subquery_expr.hpp"
#include "executor/window_call.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

void factor_or(const json& node, std::vector<json>& out);

}  // namespace

// Calls fn on every child expression (the subquery's own plan is not a child:
// only what it reads of this query, its correlated values and tested value).
void for_each_child(Expr& e, const std::function<void(Expr&)>& fn) {
  auto all = [&](std::vector<ExprPtr>& v) { for (auto& a : v) fn(*a); };
  if (auto* f = dynamic_cast<FunctionExpr*>(&e)) all(f->args);
  else if (auto* b = dynamic_cast<BoolExpr*>(&e)) all(b->args);
  else if (auto* n = dynamic_cast<NullTestExpr*>(&e)) fn(*n->arg);
  else if (auto* c = dynamic_cast<CaseExpr*>(&e)) {
    for (auto& [w, v] : c->whens) { fn(*w); fn(*v); }
    if (c->otherwise) fn(*c->otherwise);
  } else if (auto* c = dynamic_cast<CoalesceExpr*>(&e)) all(c->args);
  else if (auto* i = dynamic_cast<InListExpr*>(&e)) { fn(*i->arg); all(i->list); }
  else if (auto* l = dynamic_cast<LookupExpr*>(&e)) fn(*l->key);
  else if (auto* s = dynamic_cast<SubqueryExpr*>(&e)) {
    all(s->correlated);
    if (s->left) fn(*s->left);
    all(s->row_left);
  }
}

void collect_refs(Expr& e, std::set<int>& out) {
  if (auto* c = dynamic_cast<ColumnExpr*>(&e)) out.insert(c->index);
  for_each_child(e, [&](Expr& child) { collect_refs(child, out); });
}

int count_refs(Expr& e, int column) {
  int n = 0;
  if (auto* c = dynamic_cast<ColumnExpr*>(&e)) n += c->index == column ? 1 : 0;
  for_each_child(e, [&](Expr& child) { n += count_refs(child, column); });
  return n;
}

bool has_subquery(Expr& e) {
  if (dynamic_cast<SubqueryExpr*>(&e) != nullptr) return true;
  bool found = false;
  for_each_child(e, [&](Expr& child) { found = found || has_subquery(child); });
  return found;
}

bool has_parameter(Expr& e) {
  if (dynamic_cast<ParamExpr*>(&e) != nullptr) return true;
  bool found = false;
  for_each_child(e, [&](Expr& child) { found = found || has_parameter(child); });
  return found;
}

const ColumnExpr* stored_text_column(const Expr* e) {
  const auto* f = dynamic_cast<const FunctionExpr*>(e);
  if (f != nullptr && f->name == "cast" && f->args.size() == 1 && e->type.id == TypeId::text) e = f->args[0].get();
  const auto* column = dynamic_cast<const ColumnExpr*>(e);
  if (column == nullptr || (column->type.id != TypeId::text && column->type.id != TypeId::varchar)) return nullptr;
  return column;
}

std::optional<TextEqualityShape> text_equality_shape(const Expr& conjunct) {
  TextEqualityShape shape;
  if (const auto* f = dynamic_cast<const FunctionExpr*>(&conjunct);
      f != nullptr && f->args.size() == 2 && (f->name == "=" || f->name == "<>" || f->name == "!=")) {
    const bool left = stored_text_column(f->args[0].get()) != nullptr;
    shape.column = stored_text_column(f->args[left ? 0 : 1].get());
    shape.values.push_back(f->args[left ? 1 : 0].get());
    shape.negated = f->name != "=";
  } else if (const auto* in = dynamic_cast<const InListExpr*>(&conjunct); in != nullptr) {
    shape.column = stored_text_column(in->arg.get());
    for (const auto& item : in->list) shape.values.push_back(item.get());
    shape.negated = in->negated;
  }
  if (shape.column == nullptr) return std::nullopt;
  return shape;
}

bool reads_unlisted_columns(Expr& e) {
  if (dynamic_cast<SubqueryExpr*>(&e) != nullptr || dynamic_cast<WindowResultExpr*>(&e) != nullptr ||
      dynamic_cast<SharedExpr*>(&e) != nullptr) {
    return true;
  }
  bool found = false;
  for_each_child(e, [&](Expr& child) { found = found || reads_unlisted_columns(child); });
  return found;
}

bool null_on_every_row(const Expr& e, const std::vector<Value>* parameters) {
  if (const auto* c = dynamic_cast<const ConstExpr*>(&e)) return std::holds_alternative<Null>(c->value);
  if (dynamic_cast<const ParamExpr*>(&e) != nullptr || dynamic_cast<const OuterRefExpr*>(&e) != nullptr) {
    EvalInput one;
    one.rows = 1;
    one.parameters = parameters;
    try {
      return e.evaluate(one).null_at(0);
    } catch (const Error&) {
      return false;  // no value to read here: the rows' evaluation says so
    }
  }
  const auto* f = dynamic_cast<const FunctionExpr*>(&e);
  if (f == nullptr || !f->strict) return false;
  return std::any_of(f->args.begin(), f->args.end(), [&](const ExprPtr& a) { return null_on_every_row(*a, parameters); });
}

void run_subqueries_ahead(const Expr& e, const std::vector<Value>* parameters) {
  if (const auto* s = dynamic_cast<const SubqueryExpr*>(&e)) {
    const std::vector<Value> none;
    try {
      s->run_once_ahead(parameters ? *parameters : none);
    } catch (const Error& error) {
      // PostgreSQL raises a subquery's error only where a row evaluates it
      // (none may): the evaluation raises it then, running it again.
      if (error.state() == SqlState::query_canceled || error.state() == SqlState::out_of_memory) throw;
    }
    return;
  }
  // for_each_child only reads the children it is given here.
  for_each_child(const_cast<Expr&>(e), [&](Expr& child) { run_subqueries_ahead(child, parameters); });
}

bool volatile_function(const std::string& name) {
  static constexpr std::string_view kNames[] = {"clock_timestamp", "timeofday",  "pg_sleep",   "pg_sleep_for",
                                                "pg_sleep_until",  "random",     "setseed",    "nextval",
                                                "setval",          "currval",    "lastval",    "gen_random_uuid",
                                                "pg_cancel_backend", "pg_terminate_backend", "pg_prewarm"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

std::optional<Numeric> exact_constant(const Expr& e, const std::vector<Value>* parameters) {
  if (!foldable(e) || e.type.id == TypeId::boolean) return std::nullopt;
  Value v;
  try {
    v = evaluate_constant(e, parameters);
  } catch (const Error&) {
    return std::nullopt;
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return Numeric{*i, 0};
  if (const auto* n = std::get_if<Numeric>(&v); n && !n->is_infinite() && n->scale >= 0) return *n;
  return std::nullopt;
}

bool foldable(const Expr& e) {
  if (dynamic_cast<const ConstExpr*>(&e) || dynamic_cast<const ParamExpr*>(&e)) return true;
  if (const auto* f = dynamic_cast<const FunctionExpr*>(&e)) {
    if (f->args.empty() || volatile_function(f->name)) return false;
    return std::all_of(f->args.begin(), f->args.end(), [](const ExprPtr& a) { return foldable(*a); });
  }
  return false;
}

bool has_volatile_function(Expr& e) {
  if (const auto* f = dynamic_cast<const FunctionExpr*>(&e); f && volatile_function(f->name)) return true;
  bool found = false;
  for_each_child(e, [&](Expr& child) { found = found || has_volatile_function(child); });
  return found;
}

void remap(Expr& e, const std::vector<int>& to) {
  if (auto* c = dynamic_cast<ColumnExpr*>(&e)) c->index = to.at(static_cast<size_t>(c->index));
  for_each_child(e, [&](Expr& child) { remap(child, to); });
}

// `l = r` over a two-column input [l, r], bound by the binder (its casts).
ExprPtr bind_pair_equality(SqlType left, SqlType right, const BindContext& base) {
  BindContext pair;
  pair.parameter_types = base.parameter_types;
  pair.settings = base.settings;
  pair.columns = {{"l", left}, {"r", right}};
  auto ref = [](const char* n) { return json{{"ColumnRef", {{"fields", json::array({json{{"String", {{"sval", n}}}}})}}}}; };
  return bind_condition(json{{"A_Expr", {{"kind", "AEXPR_OP"}, {"name", json::array({json{{"String", {{"sval", "="}}}}})},
                                         {"lexpr", ref("l")}, {"rexpr", ref("r")}}}},
                        pair, "IN");
}

// Replaces the column references of a comparison over [l, r] by `by[0]` and `by[1]`.
void substitute(ExprPtr& e, std::vector<ExprPtr>& by) {
  if (auto* c = dynamic_cast<ColumnExpr*>(e.get())) {
    e = std::move(by.at(static_cast<size_t>(c->index)));
    return;
  }
  if (auto* f = dynamic_cast<FunctionExpr*>(e.get())) {
    for (auto& a : f->args) substitute(a, by);
  }
}


void split_and(const json& node, std::vector<json>& out) {
  if (node.contains("BoolExpr") && node["BoolExpr"].value("boolop", "") == "AND_EXPR") {
    for (const auto& a : node["BoolExpr"]["args"]) split_and(a, out);
    return;
  }
  if (node.contains("BoolExpr") && node["BoolExpr"].value("boolop", "") == "OR_EXPR") {
    factor_or(node, out);
    return;
  }
  out.push_back(node);
}

json replace_column_refs(const json& node, const std::function<std::optional<json>(const json& ref)>& replace) {
  if (node.is_object()) {
    if (auto it = node.find("ColumnRef"); it != node.end() && node.size() == 1) {
      if (std::optional<json> value = replace(*it)) return std::move(*value);
      return node;
    }
    json out = json::object();
    for (auto it = node.begin(); it != node.end(); ++it) out[it.key()] = replace_column_refs(it.value(), replace);
    return out;
  }
  if (node.is_array()) {
    json out = json::array();
    for (const auto& e : node) out.push_back(replace_column_refs(e, replace));
    return out;
  }
  return node;
}

bool json_any(const json& node, const std::function<bool(const json&)>& pred) {
  if (pred(node)) return true;
  if (node.is_object()) {
    for (auto& [k, v] : node.items()) {
      if (json_any(v, pred)) return true;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      if (json_any(v, pred)) return true;
    }
  }
  return false;
}

bool json_walk(const json& root, const std::function<WalkStep(const json&)>& visit) {
  std::vector<const json*> todo{&root};
  while (!todo.empty()) {
    const json& node = *todo.back();
    todo.pop_back();
    if (node.is_array()) {
      for (const json& n : node) todo.push_back(&n);
      continue;
    }
    if (!node.is_object()) continue;
    const WalkStep step = visit(node);
    if (step == WalkStep::stop) return true;
    if (step == WalkStep::skip_children) continue;
    for (const auto& [key, value] : node.items()) todo.push_back(&value);
  }
  return false;
}

bool contains_sublink_node(const json& node) {
  return json_any(node, [](const json& n) { return n.is_object() && n.contains("SubLink"); });
}

bool has_aggregate_call(const json& node) {
  return json_any(node, [](const json& n) {
    if (!n.is_object() || !n.contains("FuncCall")) return false;
    const auto& names = n["FuncCall"]["funcname"];
    return is_aggregate_name(names.back()["String"].value("sval", ""));
  });
}

bool has_window_call(const json& node) {
  return json_any(node, [](const json& n) { return n.is_object() && n.contains("FuncCall") && n["FuncCall"].contains("over"); });
}

namespace {

// (a AND b) OR (a AND c) is a AND (b OR c): the conjuncts every branch of an
// OR shares come out of it, so a join condition repeated in each branch
// (TPC-H Q19) joins by hash instead of by nested loop.
void factor_or(const json& node, std::vector<json>& out) {
  std::vector<std::vector<json>> branches;
  for (const auto& a : node["BoolExpr"]["args"]) {
    branches.emplace_back();
    split_and(a, branches.back());
  }
  std::vector<json> common;
  for (const auto& candidate : branches[0]) {
    const bool everywhere = std::all_of(branches.begin() + 1, branches.end(), [&](const std::vector<json>& b) {
      return std::any_of(b.begin(), b.end(), [&](const json& c) { return equal_ignoring_locations(c, candidate); });
    });
    if (everywhere) common.push_back(candidate);
  }
  if (common.empty()) {
    out.push_back(node);
    return;
  }
  json rest = json::array();
  for (auto& b : branches) {
    std::vector<json> left;
    for (auto& c : b) {
      const bool shared = std::any_of(common.begin(), common.end(), [&](const json& x) { return equal_ignoring_locations(x, c); });
      if (!shared) left.push_back(std::move(c));
    }
    if (left.empty()) {  // one branch is only the common part: the OR is true
      out.insert(out.end(), common.begin(), common.end());
      return;
    }
    rest.push_back(left.size() == 1 ? left[0] : json{{"BoolExpr", {{"boolop", "AND_EXPR"}, {"args", left}}}});
  }
  out.insert(out.end(), common.begin(), common.end());
  out.push_back(json{{"BoolExpr", {{"boolop", "OR_EXPR"}, {"args", rest}}}});
}

}  // namespace

}  // namespace tally::executor
