#include "executor/subquery_expr.hpp"

#include <algorithm>
#include <unordered_map>

#include "common/error.hpp"
#include "executor/array_text.hpp"
#include "executor/cancel_point.hpp"
#include "executor/group_key_filter.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/operators/hash_join_build.hpp"
#include "executor/operators/key_chains.hpp"
#include "executor/select_plan.hpp"
#include "executor/tuple_key.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/statement_context.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {

Vector OuterRefExpr::evaluate(const EvalInput& input) const {
  const size_t n = *count;
  if (input.parameters == nullptr || input.parameters->size() < n) {
    throw Error(SqlState::internal_error, "outer reference evaluated outside its subquery");
  }
  return broadcast(type, (*input.parameters)[input.parameters->size() - n + slot], input.rows);
}

struct SubqueryExpr::Result {
  size_t rows = 0;
  Vector values;                       // column 0 (scalar, ANY, ALL)
  std::vector<Vector> normalized;      // ANY with equality: the values as compared
  KeyChains chains;                    // over `normalized`, or a row form's `columns`
  bool any_null = false;
  // A row form (row_left): every column, and the rows that hold a NULL
  // (their columns gathered): no hash finds them, yet they make a row's
  // = ANY NULL rather than false.
  std::vector<Vector> columns;
  std::vector<Vector> null_row_columns;
  size_t null_rows = 0;
};

struct SubqueryExpr::Groups {
  std::vector<Vector> keys;  // one row per group
  Vector values;
  KeyChains chains;          // over `keys`
  Value empty;               // the value for a tuple no group has
  // A restricted run (restrict_groups): the keys it was restricted to.
  bool restricted = false;
  std::vector<Vector> wanted;
  std::vector<size_t> wanted_positions;  // the keys `wanted` holds (empty: all)
  KeyChains wanted_chains;
};

namespace {

// A context for a run of a subquery's plan: the statement's parameters,
// cancel token (installed for this thread by run_select), so that a cancel
// or statement_timeout stops the subquery's scans too, and engine settings
// (statement_context.hpp).
ExecContext subquery_context(const std::vector<Value>& parameters, int threads) {
  ExecContext context = nested_context(&parameters);
  context.threads = threads;
  return context;
}

}  // namespace

void SubqueryExpr::reset() const {
  {
    std::lock_guard lock(mutex_);
    cache_.clear();
  }
  std::lock_guard lock(groups_mutex_);
  groups_.reset();
  restricted_.reset();
}

std::shared_ptr<const SubqueryExpr::Result> SubqueryExpr::result_for(const std::vector<Value>& parameters) const {
  const std::string key = tuple_key(parameters);
  std::promise<std::shared_ptr<const Result>> made;
  std::shared_future<std::shared_ptr<const Result>> known;
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) {
      known = it->second;
    } else {
      // A waiting evaluation holds its own copy of the future: dropping
      // the cache's leaves it waiting for the same result.
      if (cache_.size() >= kCachedResults) cache_.clear();
      cache_.emplace(key, made.get_future().share());
    }
  }
  if (known.valid()) return known.get();  // made, or being made by another thread
  try {
    std::shared_ptr<const Result> result = make_result(parameters);
    made.set_value(result);
    return result;
  } catch (...) {
    // The waiting evaluations get the same error; a later run starts afresh.
    made.set_exception(std::current_exception());
    std::lock_guard lock(mutex_);
    cache_.erase(key);
    throw;
  }
}

std::shared_ptr<const SubqueryExpr::Result> SubqueryExpr::make_result(const std::vector<Value>& parameters) const {
  // Uncorrelated: one run per statement, which takes the worker pool; a
  // correlated one runs per distinct outer tuple, each on its caller's thread.
  ExecContext context = subquery_context(parameters, correlated.empty() ? 0 : 1);
  // A correlated subquery runs once per outer row: its runs are the loop
  // that a cancel or statement_timeout must stop, however little each reads.
  check_cancel_point();
  ResultSet rs = run_select(*plan, context);
  auto result = std::make_shared<Result>();
  result->rows = rs.rows;
  // The hashes of a large result are made on the statement's workers, and
  // its chains linked with looks at the cancel token between the steps.
  const int hash_threads = rs.rows >= 2 * kMinRowsPerPart ? worker_threads(context) : 1;
  if (kind == SubqueryKind::scalar && rs.rows > 1) {
    throw Error(SqlState::cardinality_violation, "more than one row returned by a subquery used as an expression");
  }
  if (!row_left.empty()) {
    rs.columns.resize(row_left.size());
    result->columns = std::move(rs.columns);
    std::vector<uint32_t> null_rows;
    CancelTicker ticker;
    for (size_t r = 0; r < result->rows; ++r) {
      ticker.tick();
      if (std::any_of(result->columns.begin(), result->columns.end(), [r](const Vector& c) { return c.null_at(r); }))
        null_rows.push_back(static_cast<uint32_t>(r));
    }
    result->null_rows = null_rows.size();
    for (const Vector& c : result->columns) result->null_row_columns.push_back(gather(c, null_rows));
    if (row_hashable && result->rows > 0) result->chains.build_hashed(result->columns, result->rows, hash_threads);
    return result;
  }
  if (kind != SubqueryKind::exists && !rs.columns.empty()) {
    result->values = std::move(rs.columns[0]);
    for (size_t r = 0; r < result->rows; ++r) result->any_null |= result->values.null_at(r);
  }
  if (hashable && result->rows > 0) {
    // The subquery's values as the comparison sees them (cast to the common type).
    const auto& eq = dynamic_cast<const FunctionExpr&>(*compare);
    EvalInput in;
    in.rows = result->rows;
    in.parameters = &parameters;
    in.columns = {nullptr, &result->values};
    result->normalized.push_back(eq.args[1]->evaluate(in));
    result->chains.build_hashed(result->normalized, result->rows, hash_threads);
  }
  return result;
}

void SubqueryExpr::run_once_ahead(const std::vector<Value>& parameters) const {
  if (grouped) {
    // A run restricted to the outer values' groups (restrict_groups) has
    // run already and answers every lookup that can come: the whole
    // grouped run is left for a key outside it, should one come.
    {
      std::lock_guard lock(groups_mutex_);
      if (restricted_) return;
    }
    groups_for(parameters);
  } else if (correlated.empty()) {
    result_for(parameters);
  }
}

Vector SubqueryExpr::evaluate(const EvalInput& input) const {
  const std::vector<Value> no_parameters;
  const std::vector<Value>& base = input.parameters ? *input.parameters : no_parameters;
  std::vector<Vector> outer;
  for (const auto& c : correlated) outer.push_back(c->evaluate(input));
  if (grouped) return evaluate_grouped(input, base, std::move(outer));
  if (!row_left.empty()) return evaluate_row(input, base, outer);
  if (kind == SubqueryKind::scalar && outer.empty()) {
    // One value for every row (TPC-H Q22's average balance).
    const std::shared_ptr<const Result> result = result_for(base);
    const Value value = result->rows == 0 || result->values.null_at(0) ? Value{Null{}} : result->values.get(0);
    return broadcast(type, value, input.rows);
  }
  Vector left_values;
  if (left) left_values = left->evaluate(input);
  Vector out(type);
  out.resize(input.rows);
  std::vector<Value> parameters = base;
  std::shared_ptr<const Result> result;
  // An uncorrelated IN over a hashed result (TPC-H Q18's o_orderkey IN
  // (...)) evaluates its probe side once for the whole input, not through a
  // one-row Vector per row. Only where no left value is NULL: those rows
  // are never probed, so nothing is computed that the row form would not.
  std::vector<Vector> probe_all;
  if ((kind == SubqueryKind::any || kind == SubqueryKind::all) && hashable && outer.empty() && input.rows > 0 &&
      std::none_of(left_values.nulls.begin(), left_values.nulls.end(), [](uint8_t n) { return n != 0; })) {
    result = result_for(parameters);
    if (result->rows > 0) {
      EvalInput all_rows;
      all_rows.rows = input.rows;
      all_rows.parameters = &parameters;
      all_rows.columns = {&left_values, nullptr};
      probe_all.push_back(dynamic_cast<const FunctionExpr&>(*compare).args[0]->evaluate(all_rows));
    }
  }
  if (!probe_all.empty()) {
    // Every row probed at once (the chains' bitmap where the values allow
    // one: TPC-H Q16's 8M partsupp rows NOT IN the complaint suppliers),
    // then each row decided as the loop below decides it.
    const bool all = kind == SubqueryKind::all;
    std::vector<uint32_t> found;
    result->chains.matching_rows(result->normalized, probe_all, input.rows, found);
    for (size_t r = 0; r < input.rows; ++r) {
      if (result->any_null) out.set_null(r);
      else out.ints[r] = all ? 1 : 0;
    }
    for (const uint32_t r : found) {
      if (!out.nulls.empty()) out.nulls[r] = 0;
      out.ints[r] = all ? 0 : 1;
    }
    return out;
  }
  for (size_t r = 0; r < input.rows; ++r) {
    result_at(r, base, outer, parameters, result);
    switch (kind) {
      case SubqueryKind::exists: out.set(r, Value{result->rows > 0}); break;
      case SubqueryKind::scalar:
        if (result->rows == 0 || result->values.null_at(0)) out.set_null(r);
        else out.set(r, result->values.get(0));
        break;
      case SubqueryKind::array: {
        std::vector<std::optional<std::string>> elements;
        for (size_t i = 0; i < result->rows; ++i) {
          if (result->values.null_at(i)) elements.emplace_back(std::nullopt);
          else elements.emplace_back(value_to_text(result->values.type, result->values.get(i)));
        }
        out.set(r, Value{array_literal(elements)});
        break;
      }
      case SubqueryKind::any:
      case SubqueryKind::all: {
        const bool all = kind == SubqueryKind::all;
        if (result->rows == 0) { out.set(r, Value{all}); break; }
        if (left_values.null_at(r)) { out.set_null(r); break; }
        bool decided = false, unknown = result->any_null;
        if (!probe_all.empty()) {
          decided = result->chains.find(result->normalized, probe_all, r) != kNullRow;
        } else if (hashable) {
          const auto& eq = dynamic_cast<const FunctionExpr&>(*compare);
          EvalInput one;
          one.rows = 1;
          one.parameters = &parameters;
          Vector single = gather(left_values, {static_cast<uint32_t>(r)});
          one.columns = {&single, nullptr};
          std::vector<Vector> probe;
          probe.push_back(eq.args[0]->evaluate(one));
          decided = result->chains.find(result->normalized, probe, 0) != kNullRow;
        } else {
          EvalInput pairs;
          pairs.rows = result->rows;
          pairs.parameters = &parameters;
          Vector lefts = gather(left_values, std::vector<uint32_t>(result->rows, static_cast<uint32_t>(r)));
          pairs.columns = {&lefts, &result->values};
          const Vector cmp = compare->evaluate(pairs);
          unknown = false;
          for (size_t i = 0; i < result->rows && !decided; ++i) {
            if (cmp.null_at(i)) unknown = true;
            else if ((cmp.ints[i] != 0) != all) decided = true;
          }
        }
        if (decided) out.set(r, Value{!all});
        else if (unknown) out.set_null(r);
        else out.set(r, Value{all});
        break;
      }
    }
  }
  return out;
}

void SubqueryExpr::result_at(size_t r, const std::vector<Value>& base, const std::vector<Vector>& outer,
                             std::vector<Value>& parameters, std::shared_ptr<const Result>& result) const {
  if (result && outer.empty()) return;
  parameters.resize(base.size());
  for (const auto& v : outer) parameters.push_back(v.get(r));
  result = result_for(parameters);
}

Vector SubqueryExpr::evaluate_row(const EvalInput& input, const std::vector<Value>& base,
                                  const std::vector<Vector>& outer) const {
  std::vector<Vector> lefts;
  for (const auto& e : row_left) lefts.push_back(e->evaluate(input));
  const bool all = kind == SubqueryKind::all;
  Vector out(type);
  out.resize(input.rows);
  std::vector<Value> parameters = base;
  std::shared_ptr<const Result> result;
  // Row r compared with `rows` rows of the subquery (`columns`): whether one
  // decides (true for ANY, false for ALL), `unknown` set where one is NULL.
  auto compare_with = [&](size_t r, const std::vector<Vector>& columns, size_t rows, bool& unknown) {
    if (rows == 0) return false;
    std::vector<Vector> repeated;
    for (const Vector& l : lefts) repeated.push_back(gather(l, std::vector<uint32_t>(rows, static_cast<uint32_t>(r))));
    EvalInput pairs;
    pairs.rows = rows;
    pairs.parameters = &parameters;
    for (const Vector& l : repeated) pairs.columns.push_back(&l);
    for (const Vector& c : columns) pairs.columns.push_back(&c);
    const Vector cmp = compare->evaluate(pairs);
    for (size_t i = 0; i < rows; ++i) {
      if (cmp.null_at(i)) unknown = true;
      else if ((cmp.ints[i] != 0) != all) return true;
    }
    return false;
  };
  auto row_null = [&](size_t r) {
    return std::any_of(lefts.begin(), lefts.end(), [r](const Vector& l) { return l.null_at(r); });
  };
  if (row_hashable && outer.empty() && input.rows > 0) {
    // Uncorrelated: every row probed at once; a row found nowhere is then
    // compared only where NULLs can make it NULL.
    result = result_for(parameters);
    std::vector<uint32_t> found;
    if (result->rows > 0) result->chains.matching_rows(result->columns, lefts, input.rows, found);
    std::fill(out.ints.begin(), out.ints.end(), 0);
    for (const uint32_t r : found) out.ints[r] = 1;
    if (result->rows == 0) return out;
    for (size_t r = 0; r < input.rows; ++r) {
      if (out.ints[r] != 0 || (result->null_rows == 0 && !row_null(r))) continue;
      bool unknown = false;
      const bool nulls_only = !row_null(r);
      if (!nulls_only) check_cancel_point();
      if (compare_with(r, nulls_only ? result->null_row_columns : result->columns,
                       nulls_only ? result->null_rows : result->rows, unknown)) {
        out.ints[r] = 1;
      } else if (unknown) {
        out.set_null(r);
      }
    }
    return out;
  }
  for (size_t r = 0; r < input.rows; ++r) {
    result_at(r, base, outer, parameters, result);
    if (result->rows == 0) {
      if (kind == SubqueryKind::scalar) out.set_null(r);  // (a, b) op (SELECT ...) of no row
      else out.set(r, Value{all});
      continue;
    }
    bool decided = false, unknown = false;
    if (row_hashable && !row_null(r)) {
      // Equal to a row without NULLs, or else perhaps to one with them
      // (each pair equal or NULL): PostgreSQL's partial match.
      decided = result->chains.find(result->columns, lefts, r) != kNullRow ||
                compare_with(r, result->null_row_columns, result->null_rows, unknown);
    } else {
      check_cancel_point();  // a pass over every row of the subquery per row
      decided = compare_with(r, result->columns, result->rows, unknown);
    }
    if (decided) out.set(r, Value{!all});
    else if (unknown) out.set_null(r);
    else out.set(r, Value{all});
  }
  return out;
}

std::shared_ptr<const SubqueryExpr::Groups> SubqueryExpr::groups_for(const std::vector<Value>& base) const {
  std::lock_guard lock(groups_mutex_);
  if (!groups_) groups_ = make_groups(base, nullptr);
  return groups_;
}

void SubqueryExpr::restrict_groups(const std::vector<Value>& parameters, std::vector<Vector> keys,
                                   std::vector<size_t> positions) const {
  std::lock_guard lock(groups_mutex_);
  if (groups_ || restricted_) return;
  auto wanted = std::make_shared<Groups>();
  wanted->wanted = std::move(keys);
  wanted->wanted_positions = std::move(positions);
  const size_t rows = wanted->wanted.empty() ? 0 : wanted->wanted[0].count;
  wanted->wanted_chains.build(wanted->wanted, rows);
  restricted_ = make_groups(parameters, wanted);
}

std::shared_ptr<SubqueryExpr::Groups> SubqueryExpr::make_groups(const std::vector<Value>& base,
                                                                std::shared_ptr<Groups> groups) const {
  GroupKeyFilter filter;
  if (groups) {
    groups->restricted = true;
    filter.keys = &groups->wanted;
    filter.chains = &groups->wanted_chains;
    filter.positions = groups->wanted_positions;
  } else {
    groups = std::make_shared<Groups>();
  }
  // The grouped run reads the statement's parameters only (no outer values);
  // it is one scan of the subquery's tables, so it takes the worker pool.
  ExecContext context = subquery_context(base, 0);
  if (groups->restricted) context.group_key_filter = &filter;
  ResultSet rs = run_select(*grouped->plan, context);
  const size_t key_count = grouped->key_slots.size();
  for (size_t k = 0; k < key_count; ++k) groups->keys.push_back(std::move(rs.columns[k]));
  groups->values = std::move(rs.columns[key_count]);
  // Millions of groups (TPC-H Q17's parts, Q20's part-supplier pairs)
  // are hashed and linked on every core.
  groups->chains.build_hashed(groups->keys, rs.rows, rs.rows >= 2 * kMinRowsPerPart ? worker_threads(context) : 1);
  // NULL outer values match no row: the subquery's value over no rows.
  std::vector<Value> nulls = base;
  nulls.resize(base.size() + correlated.size(), Value{Null{}});
  const auto empty = result_for(nulls);
  if (empty->rows > 0) groups->empty = empty->values.get(0);
  return groups;
}

std::shared_ptr<const Vector> SubqueryExpr::values_once(const std::vector<Value>& parameters) const {
  std::shared_ptr<const Result> result = result_for(parameters);
  return std::shared_ptr<const Vector>(result, &result->values);
}

namespace {

// The probe keys a restricted run's wanted keys hold.
const std::vector<Vector>& wanted_probe_of(const std::vector<size_t>& positions, const std::vector<Vector>& probe,
                                           std::vector<Vector>& subset) {
  if (positions.empty()) return probe;
  if (subset.empty()) {
    for (const size_t p : positions) subset.push_back(probe[p]);
  }
  return subset;
}

}  // namespace

Vector SubqueryExpr::evaluate_grouped(const EvalInput& input, const std::vector<Value>& base,
                                      std::vector<Vector> outer) const {
  std::shared_ptr<const Groups> groups;
  {
    std::lock_guard lock(groups_mutex_);
    groups = restricted_;
  }
  if (!groups) groups = groups_for(base);
  std::vector<Vector> probe;
  for (size_t slot : grouped->key_slots) probe.push_back(outer[slot]);
  std::vector<Vector> subset;
  auto wanted_probe = [&](const Groups& g, const std::vector<Vector>& all) -> const std::vector<Vector>& {
    return wanted_probe_of(g.wanted_positions, all, subset);
  };
  Vector out(type);
  out.resize(input.rows);
  for (size_t r = 0; r < input.rows; ++r) {
    uint32_t b = groups->chains.find(groups->keys, probe, r);
    if (b == kNullRow && groups->restricted && !has_null_key(probe, r) &&
        groups->wanted_chains.find(groups->wanted, wanted_probe(*groups, probe), r) == kNullRow) {
      // A key the restricted run left out: the whole grouped run answers.
      groups = groups_for(base);
      b = groups->chains.find(groups->keys, probe, r);
    }
    if (b == kNullRow) {
      if (is_null(groups->empty)) out.set_null(r);
      else out.set(r, groups->empty);
    } else if (groups->values.null_at(b)) {
      out.set_null(r);
    } else {
      out.set(r, groups->values.get(b));
    }
  }
  return out;
}

}  // namespace tally::executor
