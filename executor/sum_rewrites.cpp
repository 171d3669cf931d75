#include "executor/sum_rewrites.hpp"

#include "executor/aggregate_function.hpp"
#include "executor/engine_aggregator.hpp"
#include "executor/expression_equality.hpp"
#include "executor/expression_copy.hpp"
#include "executor/parser.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan_detail.hpp"

namespace tally::executor {

namespace {

// A CASE value that is the constant zero of scale 0 (a zero written 0.0
// would show its own scale where no x is added: not this form).
bool zero_constant(const Expr& e) {
  if (!foldable(e)) return false;
  try {
    const Value v = evaluate_constant(e, nullptr);
    if (const auto* n = std::get_if<Numeric>(&v)) return n->scale == 0 && n->is_zero();
    if (const auto* i = std::get_if<int64_t>(&v)) return *i == 0;
  } catch (const Error&) {
  }
  return false;
}

// The scale s of a CASE whose values are zeros (or NULL) and expressions of
// static scale s > 0, with at least one of each; nullopt otherwise.
std::optional<int32_t> zero_branch_scale(const CaseExpr& c) {
  std::optional<int32_t> scale;
  bool zero = false;
  auto value = [&](const Expr* v) {
    if (v == nullptr) return true;  // ELSE NULL
    if (const auto* k = dynamic_cast<const ConstExpr*>(v); k != nullptr && is_null(k->value)) return true;
    if (zero_constant(*v)) {
      zero = true;
      return true;
    }
    const std::optional<int32_t> s = engine_aggregation::static_numeric_scale(*v);
    if (!s || *s <= 0 || (scale && *scale != *s)) return false;
    scale = s;
    return true;
  };
  for (const auto& [when, then] : c.whens) {
    if (!value(then.get())) return std::nullopt;
  }
  if (!value(c.otherwise.get())) return std::nullopt;
  return zero && scale ? scale : std::nullopt;
}

// The CASE with each zero value replaced by `by` (a fresh copy each time).
ExprPtr with_zeros_as(const CaseExpr& c, const std::function<ExprPtr()>& by) {
  ExprCopy copy;
  copy.replace = [&](const Expr& node) -> ExprPtr {
    if (&node == &c) return nullptr;
    for (const auto& [when, then] : c.whens) {
      if (&node == then.get() && zero_constant(node)) return by();
    }
    if (&node == c.otherwise.get() && zero_constant(node)) return by();
    return nullptr;
  };
  return copy(c);
}

// Calls fn on each slot of `slot`'s tree that holds a reference to a post-
// aggregate column (a ColumnExpr), where the slot can be reached.
void each_column(ExprPtr& slot, const std::function<void(ExprPtr&)>& fn) {
  Expr* e = slot.get();
  if (e == nullptr) return;
  if (dynamic_cast<const ColumnExpr*>(e) != nullptr) {
    fn(slot);
    return;
  }
  auto all = [&](std::vector<ExprPtr>& v) {
    for (auto& a : v) each_column(a, fn);
  };
  if (auto* f = dynamic_cast<FunctionExpr*>(e)) all(f->args);
  else if (auto* b = dynamic_cast<BoolExpr*>(e)) all(b->args);
  else if (auto* n = dynamic_cast<NullTestExpr*>(e)) each_column(n->arg, fn);
  else if (auto* k = dynamic_cast<CaseExpr*>(e)) {
    for (auto& [when, then] : k->whens) {
      each_column(when, fn);
      each_column(then, fn);
    }
    each_column(k->otherwise, fn);
  } else if (auto* k = dynamic_cast<CoalesceExpr*>(e)) all(k->args);
  else if (auto* i = dynamic_cast<InListExpr*>(e)) {
    each_column(i->arg, fn);
    all(i->list);
  }
}

void each_reference(ExprPtr& slot, int column, const std::function<void(ExprPtr&)>& fn) {
  each_column(slot, [&](ExprPtr& ref) {
    if (static_cast<const ColumnExpr&>(*ref).index == column) fn(ref);
  });
}

// Whether every reference to `column` in the outputs and HAVING is one
// each_reference reaches (none hides in a subquery), so rewriting them all
// leaves none behind.
bool all_references_reachable(SelectPlan& plan, int column) {
  int reachable = 0, all = 0;
  auto count = [&](ExprPtr& slot) {
    if (!slot) return;
    each_reference(slot, column, [&](ExprPtr&) { ++reachable; });
    all += count_refs(*slot, column);
  };
  for (auto& o : plan.outputs) count(o);
  count(plan.having);
  return reachable == all;
}

// Replaces each reference to aggregate column `column` with `shown`, an
// expression bound over [s, n] whose s reads column `s_column` (of type
// s_type) and n column `n_column` (int8).
void show_through(SelectPlan& plan, int column, const Expr& shown, SqlType s_type, int s_column, int n_column) {
  auto rewrite = [&](ExprPtr& slot) {
    if (!slot) return;
    each_reference(slot, column, [&](ExprPtr& ref) {
      ExprCopy copy;
      copy.replace = [&](const Expr& node) -> ExprPtr {
        const auto* r = dynamic_cast<const ColumnExpr*>(&node);
        if (r == nullptr) return nullptr;
        return std::make_unique<ColumnExpr>(r->index == 0 ? s_type : SqlType{TypeId::int8},
                                            r->index == 0 ? s_column : n_column);
      };
      ref = copy(shown);
    });
  };
  for (auto& o : plan.outputs) rewrite(o);
  rewrite(plan.having);
}

// `sql`'s one select-list expression, bound over the columns s (s_type) and n (int8).
ExprPtr bind_over_sum_and_count(const std::string& sql, SqlType s_type, const BindContext& base) {
  BindContext pair;
  pair.parameter_types = base.parameter_types;
  pair.settings = base.settings;
  pair.columns = {{"s", s_type}, {"n", SqlType{TypeId::int8}}};
  const auto parsed = parse_sql(sql);
  return bind_expression(parsed.at(0).body()["targetList"][0]["ResTarget"]["val"], pair);
}

bool integer_type(TypeId t) { return t == TypeId::int2 || t == TypeId::int4 || t == TypeId::int8; }

std::pair<__int128, __int128> integer_range(TypeId t) {
  switch (t) {
    case TypeId::int2: return {INT16_MIN, INT16_MAX};
    case TypeId::int4: return {INT32_MIN, INT32_MAX};
    default: return {INT64_MIN, INT64_MAX};
  }
}

// The integer x casts to its own type (smallint + 1 adds an int4 cast of
// the smallint), or null.
const Expr* widened_integer(const Expr& x) {
  const auto* cast = dynamic_cast<const FunctionExpr*>(&x);
  if (cast == nullptr || cast->name != "cast" || cast->args.size() != 1 || !integer_type(cast->args[0]->type.id)) {
    return nullptr;
  }
  return cast->args[0].get();
}

// The values an integer expression can take: its type's, or the narrower
// type's it widens.
std::pair<__int128, __int128> value_range(const Expr& x) {
  if (const Expr* narrower = widened_integer(x)) return value_range(*narrower);
  return integer_range(x.type.id);
}

// The largest offset taken: c * count stays far inside int8 for any table.
constexpr int64_t kMaxOffset = int64_t{1} << 20;

// x + c, c + x or x - c over integers, where x + c cannot leave the
// addition's type for any x of its own type (so dropping the per-row
// addition drops no overflow error): x and c (negated for -).
std::optional<std::pair<const Expr*, int64_t>> constant_offset(const Expr& arg) {
  const auto* f = dynamic_cast<const FunctionExpr*>(&arg);
  if (f == nullptr || f->args.size() != 2 || (f->name != "+" && f->name != "-") || !integer_type(f->type.id)) {
    return std::nullopt;
  }
  for (size_t side : {size_t{1}, size_t{0}}) {
    if (side == 0 && f->name == "-") continue;
    const Expr& k = *f->args[side];
    const Expr& x = *f->args[1 - side];
    if (!integer_type(x.type.id) || !foldable(k) || foldable(x)) continue;
    int64_t c = 0;
    try {
      const Value v = evaluate_constant(k, nullptr);
      const auto* i = std::get_if<int64_t>(&v);
      if (i == nullptr) continue;
      c = *i;
    } catch (const Error&) {
      continue;
    }
    if (c > kMaxOffset || c < -kMaxOffset) continue;
    if (f->name == "-") c = -c;
    const auto [lo, hi] = value_range(x);
    const auto [result_lo, result_hi] = integer_range(f->type.id);
    if (lo + c < result_lo || hi + c > result_hi) continue;
    return std::make_pair(&x, c);
  }
  return std::nullopt;
}

// The column of a plain (no DISTINCT, FILTER or ORDER BY) `name`(x) among the
// plan's aggregates, or -1.
int plain_aggregate_column(const SelectPlan& plan, AggKind kind, const Expr& x) {
  for (size_t a = 0; a < plan.aggregates.size(); ++a) {
    const AggregateCall& call = plan.aggregates[a];
    if (call.signature.kind == kind && !call.distinct && !call.filter && !call.direct && call.args.size() == 1 &&
        same_expression(*call.args[0], x)) {
      return static_cast<int>(plan.group_keys.size() + a);
    }
  }
  return -1;
}

}  // namespace

void scale_zero_branch_sums(SelectPlan& plan, const BindContext& base) {
  if (!plan.aggregate || !plan.grouping_sets.empty() || !plan.grouping_calls.empty() || plan.windows) return;
  const size_t keys = plan.group_keys.size();
  const size_t calls = plan.aggregates.size();
  for (size_t a = 0; a < calls; ++a) {
    AggregateCall& call = plan.aggregates[a];
    if (call.signature.kind != AggKind::sum || call.distinct || call.args.size() != 1 ||
        call.args[0]->type.id != TypeId::numeric) {
      continue;
    }
    const auto* c = dynamic_cast<const CaseExpr*>(call.args[0].get());
    if (c == nullptr) continue;
    const std::optional<int32_t> scale = zero_branch_scale(*c);
    if (!scale) continue;
    // Every reference to the sum must be one this rewrite reaches.
    const int column = static_cast<int>(keys + a);
    if (!all_references_reachable(plan, column)) continue;
    const SqlType type = call.args[0]->type;
    ExprPtr summed = with_zeros_as(*c, [&] { return std::make_unique<ConstExpr>(type, Numeric{0, *scale}); });
    ExprPtr counted = with_zeros_as(*c, [&] { return std::make_unique<ConstExpr>(type, Value{}); });
    if (!summed || !counted) continue;
    const SqlType result_type = call.signature.result_type;
    ExprPtr shown = bind_over_sum_and_count("SELECT CASE WHEN n > 0 THEN s ELSE round(s) END", result_type, base);
    AggregateCall hidden;
    hidden.name = "count";
    hidden.signature = resolve_aggregate("count", {type}, false, false);
    hidden.args.push_back(std::move(counted));
    call.args[0] = std::move(summed);
    const int count_column = static_cast<int>(keys + plan.aggregates.size());
    plan.aggregates.push_back(std::move(hidden));  // `call` is not used past here
    show_through(plan, column, *shown, result_type, column, count_column);
  }
}

}  // namespace tally::executor

namespace tally::executor {

void split_constant_offset_sums(SelectPlan& plan, const BindContext& base) {
  if (!plan.aggregate || !plan.grouping_sets.empty() || !plan.grouping_calls.empty() || plan.windows) return;
  const size_t keys = plan.group_keys.size();
  // Aggregates dropped below renumber every later column: each reference
  // to each must be reachable.
  for (size_t a = 0; a < plan.aggregates.size(); ++a) {
    if (!all_references_reachable(plan, static_cast<int>(keys + a))) return;
  }
  std::vector<size_t> unused;  // calls whose references now read another's sum
  const size_t calls = plan.aggregates.size();
  for (size_t a = 0; a < calls; ++a) {
    AggregateCall& call = plan.aggregates[a];
    if (call.signature.kind != AggKind::sum || call.distinct || call.filter || call.args.size() != 1) continue;
    const auto offset = constant_offset(*call.args[0]);
    if (!offset) continue;
    // x itself where it widens a narrower integer whose sum has the same type:
    // then sum(smallint_column + 1) shares sum(smallint_column).
    const Expr* summed = offset->first;
    const Expr* narrower = widened_integer(*summed);
    if (narrower != nullptr &&
        resolve_aggregate("sum", {narrower->type}, false, false).result_type == call.signature.result_type) {
      summed = narrower;
    }
    ExprPtr x = copy_expr(*summed);
    const int64_t c = offset->second;
    if (!x) continue;
    const AggregateSignature sum_x = resolve_aggregate("sum", {x->type}, false, false);
    if (sum_x.result_type != call.signature.result_type) continue;
    const SqlType result_type = call.signature.result_type;
    const int column = static_cast<int>(keys + a);
    int sum_column = plain_aggregate_column(plan, AggKind::sum, *x);
    if (sum_column < 0) {
      sum_column = column;
      call.signature = sum_x;
      call.args[0] = copy_expr(*x);
    } else {
      unused.push_back(a);
    }
    int count_column = plain_aggregate_column(plan, AggKind::count, *x);
    if (count_column < 0) {
      AggregateCall hidden;
      hidden.name = "count";
      hidden.signature = resolve_aggregate("count", {x->type}, false, false);
      hidden.args.push_back(std::move(x));
      count_column = static_cast<int>(keys + plan.aggregates.size());
      plan.aggregates.push_back(std::move(hidden));  // `call` is not used past here
    }
    const ExprPtr shown =
        bind_over_sum_and_count("SELECT s + (" + std::to_string(c) + ") * n", result_type, base);
    show_through(plan, column, *shown, result_type, sum_column, count_column);
  }
  // Drops the calls nothing reads now, last first, renumbering the columns after each.
  for (auto a = unused.rbegin(); a != unused.rend(); ++a) {
    const int column = static_cast<int>(keys + *a);
    plan.aggregates.erase(plan.aggregates.begin() + static_cast<std::ptrdiff_t>(*a));
    auto renumber = [&](ExprPtr& slot) {
      if (!slot) return;
      each_column(slot, [&](ExprPtr& ref) {
        auto& r = static_cast<ColumnExpr&>(*ref);
        if (r.index > column) --r.index;
      });
    };
    for (auto& o : plan.outputs) renumber(o);
    renumber(plan.having);
  }
}

}  // namespace tally::executor
