#include "executor/lookup_rewrite.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "executor/column_program_compiler.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/engine_aggregator.hpp"
#include "executor/expression_copy.hpp"
#include "executor/operators/hash_join.hpp"
#include "executor/operators/subquery_scan.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/select_plan.hpp"
#include "executor/scalar_functions.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/subquery_expr.hpp"
#include "executor/table_provider.hpp"
#include "executor/sum_rewrites.hpp"

namespace tally::executor {

namespace {

// Who holds a column of the join form's space: the fact table, a lookup
// source (its number), or neither (a column the form does not know).
constexpr int kFact = -1;
constexpr int kUnknown = -2;

bool integer_key(TypeId id) {
  return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8 || id == TypeId::date;
}

// The first stored relation of an operator tree, by its probe sides.
std::string relation_name(const PhysicalOperator& op) {
  if (const auto* scan = dynamic_cast<const TableScan*>(&op)) return scan->alias();
  return op.children().empty() ? op.describe() : relation_name(*op.children()[0]);
}

// The widest key range looked up where the keys are unique (they ascend,
// or sorted they do not repeat): no array of the range is made on the host
// (a GPU run scatters its own, 5 bytes a key), so twice the fact table's rows.
uint64_t unique_span_limit(uint64_t fact_rows) {
  return std::min(kLookupMaxSpan, std::max(kLookupMinSpan, 2 * fact_rows));
}

// Whether an expression reads a text value: a node of a text type over
// columns. A text constant does not count: extract('year', o_orderdate)
// names its field so, and runs on the fact row as year_of.
bool reads_text(const Expr& e) {
  if (physical_of(e.type.id) == Physical::text) {
    std::set<int> refs;
    collect_refs(const_cast<Expr&>(e), refs);
    if (!refs.empty()) return true;
  }
  bool found = false;
  for_each_child(const_cast<Expr&>(e), [&](Expr& child) { found = found || reads_text(child); });
  return found;
}

// The key pair a relation is looked up by: the first of integer keys on
// both sides (keys.size() where none is).
size_t lookup_key(const std::vector<ExprPtr>& fact_keys, const std::vector<ExprPtr>& keys) {
  size_t k = 0;
  while (k < keys.size() && !(integer_key(keys[k]->type.id) && integer_key(fact_keys[k]->type.id))) ++k;
  return k;
}

// Rows of the largest stored table an operator tree reads.
double largest_table_rows(const PhysicalOperator& op) {
  double rows = 0;
  if (const auto* scan = dynamic_cast<const TableScan*>(&op); scan != nullptr && scan->table()) {
    rows = static_cast<double>(scan->table()->row_count());
  }
  for (const auto& child : op.children()) rows = std::max(rows, largest_table_rows(*child));
  return rows;
}

// Whether the joins keep few of the fact table's rows: fewer, by the most
// selective joined relation's estimate, than another joined relation has.
// The hash joins then test the fact table's keys against that relation's
// as they scan it and join only the rows that pass, while the lookup form
// evaluates every fact row and makes the large relation's arrays (TPC-H
// Q8: 1 in 150 parts keeps 400K of lineitem's 60M rows at SF 10, against
// 4.5M orders: 56 ms as hash joins, 83 ms as lookups).
template <typename Step>
bool few_fact_rows_joined(const std::vector<Step>& steps, double fact_rows) {
  if (steps.size() < 2) return false;
  size_t selective = 0;
  double least = 1;
  for (size_t i = 0; i < steps.size(); ++i) {
    const double table_rows = largest_table_rows(*steps[i].looked_up);
    if (table_rows <= 0) continue;
    const double kept = std::min(1.0, steps[i].looked_up->estimated_rows() / table_rows);
    if (kept < least) {
      least = kept;
      selective = i;
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (i != selective && fact_rows * least < steps[i].looked_up->estimated_rows()) return true;
  }
  return false;
}

struct KeyRange {
  int64_t lo = 0, hi = -1;  // empty where hi < lo
  uint64_t span() const { return hi >= lo ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1 : 0; }
};

// The key range of `key` where it is a stored column of a scan in `op`
// (the chunks' statistics), else nullopt.
std::optional<KeyRange> key_range(const PhysicalOperator& op, const Expr& key) {
  const auto* ref = dynamic_cast<const ColumnExpr*>(&key);
  if (ref == nullptr) return std::nullopt;
  if (const auto* scan = dynamic_cast<const TableScan*>(&op); scan != nullptr && scan->table()) {
    const auto& layout = scan->read_layout();
    const auto at = std::find(layout.begin(), layout.end(), ref->index);
    if (at == layout.end()) return std::nullopt;
    const int column = scan->table_columns()[static_cast<size_t>(at - layout.begin())];
    const TableSnapshot& table = *scan->table();
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t c = 0; c < table.chunk_count(); ++c) {
      const ChunkColumnStats s = table.stats(c, column);
      if (!s.known) return std::nullopt;
      if (s.max >= s.min) {
        lo = std::min(lo, s.min);
        hi = std::max(hi, s.max);
      }
    }
    return KeyRange{lo, hi};
  }
  for (const auto& child : op.children()) {
    if (auto range = key_range(*child, key)) return range;
  }
  return std::nullopt;
}

std::optional<uint64_t> key_span(const PhysicalOperator& op, const Expr& key) {
  const std::optional<KeyRange> range = key_range(op, key);
  return range ? std::optional<uint64_t>(range->span()) : std::nullopt;
}

bool packable_key(TypeId id) { return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8; }

// A composite key as one integer for a lookup: both sides' key columns
// packed as sum of (k - lo) * weight over the build side's ranges, so that
// each build row's key is its own (TPC-H's partsupp by part and supplier;
// the table then hashes it). A fact row's packed key may equal a build
// row's only where its keys are that row's or one lies outside the build
// side's range, so the pairs' equalities, kept as conditions, decide.
// nullopt where a range is unknown or a fact row's packed key could leave
// int64 (the fact table's ranges, from its statistics, tell).
struct PackedKey {
  ExprPtr fact, build;
};
std::optional<PackedKey> pack_keys(const std::vector<ExprPtr>& fact_keys, const std::vector<ExprPtr>& keys,
                                   const PhysicalOperator& fact, const PhysicalOperator& looked_up,
                                   const BindContext& bind) {
  std::vector<size_t> pairs;
  for (size_t o = 0; o < keys.size(); ++o) {
    if (packable_key(keys[o]->type.id) && packable_key(fact_keys[o]->type.id)) pairs.push_back(o);
  }
  if (pairs.size() < 2) return std::nullopt;
  std::vector<KeyRange> build_ranges, fact_ranges;
  for (const size_t o : pairs) {
    const std::optional<KeyRange> b = key_range(looked_up, *keys[o]);
    const std::optional<KeyRange> f = key_range(fact, *fact_keys[o]);
    if (!b || !f || b->span() == 0) return std::nullopt;
    build_ranges.push_back(*b);
    fact_ranges.push_back(*f);
  }
  constexpr __int128 kLimit = static_cast<__int128>(1) << 62;
  std::vector<int64_t> weights(pairs.size());
  __int128 weight = 1, reach = 0;
  for (size_t i = pairs.size(); i-- > 0;) {
    weights[i] = static_cast<int64_t>(weight);
    const __int128 lo = build_ranges[i].lo;
    const __int128 far = std::max(lo - fact_ranges[i].lo, fact_ranges[i].hi - lo);
    reach += std::max<__int128>(far, build_ranges[i].span()) * weight;
    weight *= build_ranges[i].span();
    if (weight > kLimit || reach > kLimit) return std::nullopt;
  }
  BindContext context;
  context.parameter_types = bind.parameter_types;
  context.settings = bind.settings;
  auto pack = [&](const std::vector<ExprPtr>& side) -> ExprPtr {
    ExprPtr sum;
    for (size_t i = 0; i < pairs.size(); ++i) {
      ExprPtr k = copy_expr(*side[pairs[i]]);
      if (!k) return nullptr;
      auto offset = make_binary_operator(
          "-", std::move(k), std::make_unique<ConstExpr>(SqlType{TypeId::int8}, Value{build_ranges[i].lo}), context);
      auto term = make_binary_operator(
          "*", std::move(offset), std::make_unique<ConstExpr>(SqlType{TypeId::int8}, Value{weights[i]}), context);
      sum = sum ? make_binary_operator("+", std::move(sum), std::move(term), context) : std::move(term);
    }
    return sum;
  };
  PackedKey packed{pack(fact_keys), pack(keys)};
  if (!packed.fact || !packed.build) return std::nullopt;
  return packed;
}

// Expressions of the join form's space made expressions of the lookup
// form: a fact column becomes the table's column, and the largest parts
// that read one joined relation only become a value it looks up.
class Rewriter {
 public:
  Rewriter(std::vector<int> owner, std::vector<int> fact_column, LookupForm& form)
      : owner_(std::move(owner)), fact_column_(std::move(fact_column)), form_(form), keys_(form.set->size()),
        columns_(form.set->size()) {}

  ExprPtr operator()(const Expr& e) {
    ExprCopy copy;
    copy.replace = [&](const Expr& node) { return replace(node, copy); };
    ExprPtr out = copy(e);
    if (!out) failed = true;
    return out;
  }

  // Source i's key over the fact row, set before any of its values is looked up.
  void set_key(size_t i, ExprPtr key) { keys_[i] = std::move(key); }
  ExprPtr presence(size_t i) {
    auto row = std::make_unique<LookupExpr>(SqlType{TypeId::int4}, copy_expr(*keys_[i]), form_.set, i, -1);
    return std::make_unique<NullTestExpr>(std::move(row), true);
  }

  bool failed = false;

 private:
  int owner_of(int index) const {
    return index >= 0 && static_cast<size_t>(index) < owner_.size() ? owner_[static_cast<size_t>(index)] : kUnknown;
  }

  ExprPtr replace(const Expr& node, ExprCopy& copy) {
    std::set<int> refs;
    collect_refs(const_cast<Expr&>(node), refs);
    if (refs.empty()) return nullptr;  // constants are copied as they are
    const int first = owner_of(*refs.begin());
    const bool one = std::all_of(refs.begin(), refs.end(), [&](int r) { return owner_of(r) == first; });
    // A part that reads one joined relation and text (p_brand = 'Brand#12',
    // p_type LIKE 'PROMO%') is evaluated once per row of that relation and
    // looked up as its value; other parts (extract(year from o_orderdate),
    // p_size < 10) look their columns up and compute on the fact row, where
    // the programs run them (a per-row host evaluation of millions of
    // orders would take longer than the query).
    if (one && first >= 0 && (dynamic_cast<const ColumnExpr*>(&node) != nullptr || reads_text(node))) {
      if (has_volatile_function(const_cast<Expr&>(node)) || has_subquery(const_cast<Expr&>(node))) {
        copy.failed = true;
        return nullptr;
      }
      return lookup(static_cast<size_t>(first), node, copy);
    }
    if (const auto* c = dynamic_cast<const ColumnExpr*>(&node)) {
      if (owner_of(c->index) != kFact) {
        copy.failed = true;
        return nullptr;
      }
      return std::make_unique<ColumnExpr>(c->type, fact_column_[static_cast<size_t>(c->index)], c->name);
    }
    return nullptr;  // copied, its children rewritten
  }

  // The value `node` (reading source i's columns only) by the fact row's key.
  ExprPtr lookup(size_t i, const Expr& node, ExprCopy& copy) {
    if (!keys_[i]) {
      copy.failed = true;
      return nullptr;
    }
    std::vector<ExprPtr>& columns = form_.sources[i].columns;
    // A column named several times is looked up as one.
    int column = -1;
    const auto* ref = dynamic_cast<const ColumnExpr*>(&node);
    if (ref != nullptr) {
      for (const auto& [index, at] : columns_[i]) {
        if (index == ref->index) column = at;
      }
    }
    if (column < 0) {
      ExprPtr value = copy_expr(node);
      if (!value) {
        copy.failed = true;
        return nullptr;
      }
      column = static_cast<int>(columns.size());
      columns.push_back(std::move(value));
      if (ref != nullptr) columns_[i].emplace_back(ref->index, column);
    }
    return std::make_unique<LookupExpr>(node.type, copy_expr(*keys_[i]), form_.set, i, column,
                                        engine_aggregation::static_numeric_scale(node));
  }

  std::vector<int> owner_;
  std::vector<int> fact_column_;
  LookupForm& form_;
  std::vector<ExprPtr> keys_;
  std::vector<std::vector<std::pair<int, int>>> columns_;  // per source: (space index, lookup column)
};

// Whether the engines take the lookup form as one table's programs: its
// keys stored columns or key programs, its WHERE and aggregate inputs compiled (with the
// conditions of engine_aggregator.cpp's compile_programs). Only then does
// the form pay: evaluated row by row on the host, the hash joins' tests on
// stored keys are faster.
bool runs_as_programs(const SelectPlan& p) {
  ProgramColumnMap columns;
  columns.lookups_unbuilt = true;
  const TableSnapshot& table = *p.table;
  columns.dictionary = [&table](int column) { return table.dictionary(column); };
  if (p.where && !compile_filter(*p.where, columns, nullptr)) return false;
  // Keys of the fact table's columns go to the engines as they are; any
  // other key set is a tuple of key programs.
  const bool stored = std::all_of(p.group_keys.begin(), p.group_keys.end(),
                                  [](const ExprPtr& k) { return dynamic_cast<const ColumnExpr*>(k.get()) != nullptr; });
  for (const auto& k : p.group_keys) {
    std::shared_ptr<const storage::StringDictionary> dictionary;
    if (!stored && !compile_key(*k, columns, nullptr, dictionary)) return false;
  }
  for (const auto& a : p.aggregates) {
    if (a.filter || a.distinct || a.direct) return false;
    for (const auto& arg : a.args) {
      if (dynamic_cast<const ColumnExpr*>(arg.get()) != nullptr) continue;
      const auto program = compile_input(*arg, columns, nullptr);
      if (!program) return false;
      if (arg->type.id == TypeId::numeric &&
          engine_aggregation::static_numeric_scale(*arg) != std::optional<int32_t>(program->scale)) {
        return false;
      }
    }
  }
  return true;
}

ExprPtr conjunction(std::vector<ExprPtr> conjuncts) {
  if (conjuncts.empty()) return nullptr;
  if (conjuncts.size() == 1) return std::move(conjuncts[0]);
  return std::make_unique<BoolExpr>(BoolOp::and_, std::move(conjuncts));
}

}  // namespace

std::shared_ptr<const LookupForm> plan_lookup_form(const SelectPlan& plan, const BindContext& bind) {
  if (!plan.aggregate || !plan.source || !plan.grouping_sets.empty() || !plan.grouping_calls.empty() || plan.windows ||
      plan.where) {
    return nullptr;
  }
  // The chain of joins (and filters) down to one table scan, the fact
  // table, each join's other side looked up by key: at each join the side
  // that reads the largest table leads on (the planner builds on the
  // smaller input, which a filter may make the fact table's side, and may
  // probe with a dimension: TPC-H Q8 probes customer with the join of
  // orders and lineitem).
  struct Step {
    const PhysicalOperator* looked_up;
    const std::vector<ExprPtr>* fact_keys;
    const std::vector<ExprPtr>* keys;
    const std::vector<ExprPtr>* residual;
  };
  std::vector<Step> steps;
  std::vector<const Expr*> conditions;
  // A derived table that only projects its FROM tree (TPC-H Q7, Q8 and Q9
  // compute their keys and inputs in one and group above it) is seen
  // through: the query's references to its columns become its expressions,
  // over its tree's column space.
  const PhysicalOperator* op = plan.source.get();
  size_t space_width = plan.source_width;
  const SubqueryScan* derived = nullptr;
  std::vector<const Expr*> outer_conditions;  // filters above the derived table
  {
    const PhysicalOperator* top = op;
    std::vector<const Expr*> above;
    while (const auto* f = dynamic_cast<const FilterOperator*>(top)) {
      for (const auto& c : f->conditions()) above.push_back(c.get());
      top = f->children()[0].get();
    }
    if (const auto* d = dynamic_cast<const SubqueryScan*>(top)) {
      const SelectPlan& q = *d->plan();
      if (q.aggregate || !q.source || q.where || q.distinct || !q.distinct_on.empty() || !q.sort.empty() || q.limit ||
          q.offset || q.windows || !q.subqueries.empty() || q.outputs.size() < d->columns().size()) {
        return nullptr;
      }
      derived = d;
      outer_conditions = std::move(above);
      op = q.source.get();
      space_width = q.source_width;
    }
  }
  const TableScan* scan = nullptr;
  for (;;) {
    if (const auto* j = dynamic_cast<const HashJoin*>(op)) {
      if (j->kind() != JoinKind::inner || j->build_keys().empty()) return nullptr;
      const PhysicalOperator* probe = j->children()[0].get();
      const PhysicalOperator* build = j->children()[1].get();
      // The side holding the largest table leads to the fact table.
      if (largest_table_rows(*build) > largest_table_rows(*probe)) {
        steps.push_back(Step{probe, &j->build_keys(), &j->probe_keys(), &j->residual()});
        op = build;
      } else {
        steps.push_back(Step{build, &j->probe_keys(), &j->build_keys(), &j->residual()});
        op = probe;
      }
    } else if (const auto* f = dynamic_cast<const FilterOperator*>(op)) {
      for (const auto& c : f->conditions()) conditions.push_back(c.get());
      op = f->children()[0].get();
    } else {
      scan = dynamic_cast<const TableScan*>(op);
      break;
    }
  }
  if (scan == nullptr || !scan->table() || steps.empty()) return nullptr;
  std::reverse(steps.begin(), steps.end());
  const uint64_t fact_rows = scan->table()->row_count();
  if (few_fact_rows_joined(steps, static_cast<double>(fact_rows) * kFewFactRowsFactor)) return nullptr;
  // Per step, its integer keys packed into one where the first alone repeats.
  std::vector<std::optional<PackedKey>> packed(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& step = steps[i];
    if (step.looked_up->estimated_rows() * kFactRowsPerColumnLookupRow > static_cast<double>(fact_rows)) return nullptr;
    // A looked-up key whose range is much narrower than the relation's
    // estimated rows repeats (partsupp's ps_partkey, 4 rows a key): the
    // build would find it and fall back to the hash joins. Its integer
    // keys together are looked up instead (ps_partkey and ps_suppkey).
    const size_t k = lookup_key(*step.fact_keys, *step.keys);
    if (k == step.keys->size()) return nullptr;
    const std::optional<uint64_t> span = key_span(*step.looked_up, *(*step.keys)[k]);
    if (span && 2.0 * static_cast<double>(*span) < step.looked_up->estimated_rows()) {
      packed[i] = pack_keys(*step.fact_keys, *step.keys, *scan, *step.looked_up, bind);
      if (!packed[i]) return nullptr;
    }
  }

  auto form = std::make_shared<LookupForm>();
  form->space_width = space_width;
  form->set = std::make_shared<LookupSet>(steps.size());
  form->fact = scan->alias();
  form->fact_rows = fact_rows;
  std::vector<int> owner(space_width, kUnknown), fact_column(space_width, -1);
  for (size_t i = 0; i < scan->read_layout().size(); ++i) {
    const auto space = static_cast<size_t>(scan->read_layout()[i]);
    if (space >= owner.size()) return nullptr;
    owner[space] = kFact;
    fact_column[space] = scan->table_columns()[i];
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    for (const int space : steps[i].looked_up->layout()) {
      if (space < 0 || static_cast<size_t>(space) >= owner.size()) return nullptr;
      owner[static_cast<size_t>(space)] = static_cast<int>(i);
    }
  }
  Rewriter rewrite(std::move(owner), std::move(fact_column), *form);
  std::vector<ExprPtr> where;
  for (const auto& f : scan->filters()) where.push_back(rewrite(*f));
  for (size_t i = 0; i < steps.size(); ++i) {
    const std::vector<ExprPtr>& fact_keys = *steps[i].fact_keys;
    const std::vector<ExprPtr>& keys = *steps[i].keys;
    const size_t k = lookup_key(fact_keys, keys);
    if (k == keys.size()) return nullptr;
    LookupSource source;
    source.build = steps[i].looked_up;
    source.build_key = packed[i] ? std::move(packed[i]->build) : copy_expr(*keys[k]);
    source.name = relation_name(*source.build);
    if (!source.build_key) return nullptr;
    form->sources.push_back(std::move(source));
    rewrite.set_key(i, rewrite(packed[i] ? *packed[i]->fact : *fact_keys[k]));
    if (rewrite.failed) return nullptr;
    where.push_back(rewrite.presence(i));
    // The other key pairs hold for the one row the key finds (a packed
    // key's pairs too: pack_keys).
    for (size_t o = 0; o < keys.size(); ++o) {
      if (o == k && !packed[i]) continue;
      ExprPtr eq = bind_pair_equality(fact_keys[o]->type, keys[o]->type, bind);
      std::vector<ExprPtr> sides;
      sides.push_back(rewrite(*fact_keys[o]));
      sides.push_back(rewrite(*keys[o]));
      if (rewrite.failed) return nullptr;
      substitute(eq, sides);
      where.push_back(std::move(eq));
    }
    for (const auto& r : *steps[i].residual) where.push_back(rewrite(*r));
  }
  for (const Expr* c : conditions) where.push_back(rewrite(*c));
  // The query's own expressions, through the derived table where it has one.
  auto rewrite_outer = [&](const Expr& e) -> ExprPtr {
    if (derived == nullptr) return rewrite(e);
    ExprCopy through;
    through.replace = [&](const Expr& node) -> ExprPtr {
      const auto* ref = dynamic_cast<const ColumnExpr*>(&node);
      if (ref == nullptr) return nullptr;
      const auto& layout = derived->layout();
      const auto at = std::find(layout.begin(), layout.end(), ref->index);
      if (at == layout.end()) {
        through.failed = true;
        return nullptr;
      }
      return copy_expr(*derived->plan()->outputs[static_cast<size_t>(at - layout.begin())]);
    };
    ExprPtr inner = through(e);
    if (!inner) {
      rewrite.failed = true;
      return nullptr;
    }
    return rewrite(*inner);
  };
  for (const Expr* c : outer_conditions) where.push_back(rewrite_outer(*c));

  auto lookup_plan = std::make_shared<SelectPlan>();
  SelectPlan& p = *lookup_plan;
  p.table = scan->table();
  p.aggregate = true;
  for (const auto& k : plan.group_keys) p.group_keys.push_back(rewrite_outer(*k));
  for (const auto& a : plan.aggregates) {
    AggregateCall call;
    call.name = a.name;
    call.signature = a.signature;
    for (const auto& arg : a.args) call.args.push_back(rewrite_outer(*arg));
    if (a.filter) call.filter = rewrite_outer(*a.filter);
    if (a.direct) call.direct = rewrite_outer(*a.direct);
    call.distinct = a.distinct;
    call.descending = a.descending;
    p.aggregates.push_back(std::move(call));
  }
  if (rewrite.failed) return nullptr;
  // A relation of more than an eighth of the fact table's rows is looked
  // up for its columns only: a value evaluated per row of it (a text
  // condition) would take the host longer than the hash join it replaces.
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].looked_up->estimated_rows() * kFactRowsPerLookupRow <= static_cast<double>(fact_rows)) continue;
    for (const ExprPtr& c : form->sources[i].columns) {
      if (dynamic_cast<const ColumnExpr*>(c.get()) == nullptr) return nullptr;
    }
  }
  p.where = conjunction(std::move(where));
  // Above the aggregate the expressions read its keys and aggregates: as
  // they are, and an uncorrelated subquery (HAVING's, in TPC-H Q11) is
  // the hash-join form's own, shared. Subqueries anywhere else are not
  // copied (the rewrite above failed on them).
  bool copied = true;
  auto copy = [&](const ExprPtr& e) -> ExprPtr {
    if (!e) return nullptr;
    ExprCopy above;
    above.replace = [&](const Expr& node) -> ExprPtr {
      const auto* s = dynamic_cast<const SubqueryExpr*>(&node);
      if (s == nullptr) return nullptr;
      if (!s->correlated.empty() || s->left || !s->row_left.empty()) {
        above.failed = true;
        return nullptr;
      }
      return std::make_unique<SharedExpr>(node);
    };
    ExprPtr c = above(*e);
    copied = copied && c != nullptr;
    return c;
  };
  for (const auto& o : plan.outputs) p.outputs.push_back(copy(o));
  p.having = copy(plan.having);
  p.limit = copy(plan.limit);
  p.offset = copy(plan.offset);
  if (!copied) return nullptr;
  p.visible = plan.visible;
  p.names = plan.names;
  p.subqueries = plan.subqueries;  // reset when either form runs
  p.distinct = plan.distinct;
  p.distinct_on = plan.distinct_on;
  p.sort = plan.sort;
  std::set<int> used;
  if (p.where) collect_refs(*p.where, used);
  for (const auto& k : p.group_keys) collect_refs(*k, used);
  for (const auto& a : p.aggregates) {
    for (const auto& arg : a.args) collect_refs(*arg, used);
    if (a.filter) collect_refs(*a.filter, used);
  }
  p.scan_columns.assign(used.begin(), used.end());
  // The sums of CASE ... ELSE 0 of a derived table's values, seen now.
  rewrite_sums(p, bind);
  if (!runs_as_programs(p)) return nullptr;
  form->plan = std::move(lookup_plan);
  return form;
}

std::optional<ResultSet> run_lookup_form(const LookupForm& form, ExecContext& context) {
  const auto started = std::chrono::steady_clock::now();
  LookupSet& set = *form.set;
  struct Clear {
    LookupSet& set;
    ~Clear() { set.clear(); }
  } clear{set};
  set.clear();
  const uint64_t max_span =
      std::min(kLookupMaxSpan, std::max(kLookupMinSpan, static_cast<uint64_t>(form.fact_rows / kFactRowsPerLookupRow)));
  const uint64_t max_unique_span = unique_span_limit(form.fact_rows);
  // The joined relations are built at once, each on the cores it takes:
  // one build is a scan or a few joins whose parts leave cores idle (TPC-H
  // Q9's 15M orders beside partsupp's join with part and supplier). Each
  // runs in its own copy of the context: a hash join in a build sets the
  // key tests its probe side's scans apply (ExecContext::key_tests), and
  // EXPLAIN's lines come back in the sources' order.
  const size_t sources = form.sources.size();
  std::vector<uint8_t> built(sources, 0);
  std::vector<std::vector<std::string>> explains(sources);
  cpu::parallel_tasks(static_cast<int>(sources), sources, [&](int, size_t i) {
    ExecContext own = context;
    own.explain = context.explain ? &explains[i] : nullptr;
    built[i] = build_lookup(form.sources[i], form.space_width, max_span, max_unique_span, own, set.table(i)) ? 1 : 0;
  });
  for (size_t i = 0; i < sources; ++i) {
    if (context.explain) context.explain->insert(context.explain->end(), explains[i].begin(), explains[i].end());
    if (!built[i]) {
      if (context.explain) {
        context.explain->push_back("Lookup joins not used: the keys of " + form.sources[i].name + " repeat or span more than " +
                                   std::to_string(max_span) + " keys; the hash joins ran");
      }
      return std::nullopt;
    }
  }
  if (context.explain) {
    context.explain->push_back("Lookup joins: " + form.fact + " looks up " + std::to_string(form.sources.size()) +
                               " joined relation(s) by key");
    for (size_t i = 0; i < set.size(); ++i) context.explain->push_back("  " + set.table(i).description);
  }
  ResultSet result = run_select(*form.plan, context);
  if (context.explain) {
    // The arrays the host scattered from unique keys (only where it
    // evaluated a lookup), and the statement's time with the builds.
    std::string scattered;
    for (size_t i = 0; i < set.size(); ++i) {
      const LookupTable& t = set.table(i);
      if (t.host_arrays_ms <= 0 || !t.present.size()) continue;
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s%s %.3f ms", scattered.empty() ? "" : ", ", form.sources[i].name.c_str(),
                    t.host_arrays_ms);
      scattered += buf;
    }
    if (!scattered.empty()) context.explain->push_back("Lookup arrays made on the host: " + scattered);
    std::vector<std::string>& lines = *context.explain;
    for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
      if (line->rfind(kExecutionTime, 0) != 0) continue;
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%.3f ms", kExecutionTime,
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
      *line = buf;
      break;
    }
  }
  return result;
}

}  // namespace tally::executor
