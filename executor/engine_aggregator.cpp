// The planner side of the engine seam: turns a query's group keys and
// aggregates into fixed-width engine input (aggregate_engine.hpp), runs an
// engine, and finalizes its partial states into PostgreSQL values through
// finalize.hpp. Ordered-set aggregates and count(DISTINCT) of fixed-width
// inputs go to the engines as sorted values per group (ordered_values,
// count_distinct); shapes an engine cannot take (other DISTINCT aggregates,
// ordered-set aggregates or min/max of text, ...) are left to the generic path.
//
// Engine choice (SET tally.engine): `auto` and `gpu` run on the GPU engine
// when the database has one and it can run the aggregation (integer keys and
// inputs; count, sum, avg, min, max, bool_and/or; FILTER on any of them but
// count(*)), else on the CPU
// engine. `gpu` on an aggregation the GPU cannot run still answers, on the
// CPU, and EXPLAIN ANALYZE says why: the SQL is valid, only the placement
// differs, and PostgreSQL has no error for "this engine cannot". `cpu` always
// runs on the CPU engine.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/engine_aggregator.hpp"

#include "executor/lookup_join.hpp"
#include "common/column_program_run.hpp"
#include "executor/column_program_compiler.hpp"
#include "executor/finalize.hpp"
#include "executor/estimate/estimate_cache.hpp"
#include "executor/estimate/group_count_estimator.hpp"
#include "executor/expression_equality.hpp"
#include "executor/cpu/cpu_engine.hpp"
#include "executor/cpu/ordered_values_run.hpp"
#include "executor/cpu/tuple_key_run.hpp"
#include "gpu/engine/device_ordered_rows.hpp"
#include "gpu/pipeline/column_programs.hpp"
#include "gpu/ordered_values_sort.hpp"

namespace tally::executor {

namespace engine_aggregation {


namespace {

// Whether the values of a float column (table statistics) are small enough
// that PostgreSQL's float8_accum cannot overflow its sum of squares over
// all of its rows: avg then needs only the count and the sum (its result is
// Sx / N either way), not the moments. float8_accum's largest intermediate is
// (x * N - Sx)^2 <= (2 * max|x| * N)^2: bounded far below DBL_MAX when
// max|x| * N < 1e149. Unknown statistics, infinities, or NaN-only chunks:
// not bounded.
bool float_sums_bounded(const TableSnapshot* table, const Expr& input) {
  const auto* col = dynamic_cast<const ColumnExpr*>(&input);
  if (col == nullptr || table == nullptr || !is_float(input.type.id) || table->chunk_count() == 0) return false;
  double largest = 0;
  for (size_t c = 0; c < table->chunk_count(); ++c) {
    const ChunkColumnStats st = table->stats(c, col->index);
    if (st.known && st.max < st.min) continue;  // all NULL
    if (!st.float_known) return false;
    largest = std::max({largest, std::fabs(st.min_float), std::fabs(st.max_float)});
  }
  return std::isfinite(largest) && largest * static_cast<double>(table->row_count()) < 1e149;
}

// corr/covar/regr_* take float8 arguments, so an integer or float4 column
// reaches them through an implicit cast. Engines read moments2_float's inputs
// of any width as doubles (the same conversion as the cast), so the stored
// column goes in instead: raw chunks, resident on the GPU, no host pass.
const Expr* stored_moment_input(const Expr* arg) {
  const auto* cast = dynamic_cast<const FunctionExpr*>(arg);
  if (cast == nullptr || cast->name != "cast" || cast->args.size() != 1 || cast->type.id != TypeId::float8) return arg;
  const auto* col = dynamic_cast<const ColumnExpr*>(cast->args[0].get());
  if (col == nullptr) return arg;
  const TypeId from = col->type.id;
  const bool read_as_double = from == TypeId::int2 || from == TypeId::int4 || from == TypeId::int8 || from == TypeId::float4;
  return read_as_double ? col : arg;
}

// Percentiles read one or two values of their group: with the fraction
// known (a constant of the statement, checked to be in [0, 1]; PostgreSQL's
// 22003 for one outside comes from the finalizer, which then sees every
// value), the device copies back only those.
std::vector<std::optional<OrderedPick>> ordered_picks(const std::vector<AggregateCall>& aggregates,
                                                      const std::vector<Value>& fractions) {
  std::vector<std::optional<OrderedPick>> picks(aggregates.size());
  for (size_t a = 0; a < aggregates.size() && a < fractions.size(); ++a) {
    const AggKind kind = aggregates[a].signature.kind;
    if (kind == AggKind::ordered_nth && std::holds_alternative<int64_t>(fractions[a])) {
      const int64_t at = std::get<int64_t>(fractions[a]);
      if (at >= 0) picks[a] = OrderedPick{OrderedPick::Kind::nth, static_cast<double>(at), aggregates[a].descending};
      continue;
    }
    if (kind != AggKind::percentile_cont && kind != AggKind::percentile_disc) continue;
    if (!std::holds_alternative<double>(fractions[a])) continue;
    const double f = std::get<double>(fractions[a]);
    if (!(f >= 0 && f <= 1)) continue;
    picks[a] = OrderedPick{kind == AggKind::percentile_cont ? OrderedPick::Kind::cont : OrderedPick::Kind::disc, f,
                           aggregates[a].descending};
  }
  return picks;
}
}  // namespace

std::optional<int32_t> static_numeric_scale(const Expr& e) {
  if (e.type.id != TypeId::numeric) {
    // An integer operand (a cast of one to numeric) has scale 0.
    return is_integer(e.type.id) ? std::optional<int32_t>(0) : std::nullopt;
  }
  if (dynamic_cast<const ColumnExpr*>(&e)) {
    return e.type.typmod >= 4 ? std::optional<int32_t>(e.type.numeric_scale()) : std::nullopt;
  }
  if (const auto* l = dynamic_cast<const LookupExpr*>(&e)) return l->scale;
  if (const auto* c = dynamic_cast<const CaseExpr*>(&e)) {
    // Every value of one scale (NULLs aside): the row's value has it whichever is taken.
    std::optional<int32_t> scale;
    auto value = [&](const Expr* v) {
      if (v == nullptr) return true;
      if (const auto* k = dynamic_cast<const ConstExpr*>(v); k != nullptr && is_null(k->value)) return true;
      const std::optional<int32_t> s = static_numeric_scale(*v);
      if (!s || (scale && *scale != *s)) return false;
      scale = s;
      return true;
    };
    for (const auto& [when, then] : c->whens) {
      if (!value(then.get())) return std::nullopt;
    }
    return value(c->otherwise.get()) ? scale : std::nullopt;
  }
  if (const auto* k = dynamic_cast<const ConstExpr*>(&e)) {
    if (!std::holds_alternative<Numeric>(k->value) || std::get<Numeric>(k->value).is_infinite()) return std::nullopt;
    return std::get<Numeric>(k->value).scale;
  }
  const auto* f = dynamic_cast<const FunctionExpr*>(&e);
  if (f == nullptr || f->args.empty() || f->args.size() > 2) return std::nullopt;
  if (extract_whole_field(*f, nullptr)) return 0;  // a year, month, ...: an integer
  std::optional<int32_t> a = static_numeric_scale(*f->args[0]);
  if (!a) return std::nullopt;
  if (f->args.size() == 1) {
    if (f->name == "-") return a;
    // A cast to numeric keeps the operand's scale; to numeric(p,s), the typmod's.
    if (f->name == "cast" && e.type.typmod < 4) return a;  // from an integer (0) or a numeric (its scale)
    if (f->name == "cast" && e.type.typmod >= 4) return e.type.numeric_scale();
    return std::nullopt;
  }
  const std::optional<int32_t> b = static_numeric_scale(*f->args[1]);
  if (!b) return std::nullopt;
  if (f->name == "+" || f->name == "-") return std::max(*a, *b);
  if (f->name == "*") return *a + *b;
  return std::nullopt;
}

namespace {

// The largest dictionary min or max of text ranks (dictionary_order.hpp):
// a few hundred milliseconds of sorting on the workers, once per column.
constexpr int32_t kMaxRankedEntries = int32_t{1} << 22;

}  // namespace

std::optional<Mapping> map_aggregate(const AggregateCall& call) {
  const AggKind kind = call.signature.kind;
  const TypeId in = call.signature.arg_types.empty() ? TypeId::unknown : call.signature.arg_types[0].id;
  // A bare column of at most 18 digits always fits the engines' int64; an
  // evaluated expression of static scale is checked value by value as it is
  // sunk (engine_aggregator_sink.cpp).
  const bool bare = dynamic_cast<const ColumnExpr*>(call.args.empty() ? nullptr : call.args[0].get()) != nullptr;
  // A bare column without a declared scale (a derived table's expression,
  // numeric as PostgreSQL types it) is summed at its first value's scale
  // while every value has that scale (EngineAggregator::input_scales_).
  const bool scaled_numeric = in == TypeId::numeric && !call.args.empty() &&
                              (bare ? call.args[0]->type.typmod < 4 || call.args[0]->type.numeric_precision() <= 18
                                    : static_numeric_scale(*call.args[0]).has_value());
  // Inputs an engine sorts by order code (common/ordered_code.hpp). Not
  // text: its dictionary codes are in order of first appearance, not in
  // the collation's order, and evaluated text reaches no engine.
  const bool orderable = is_intlike(in) || is_float(in) || scaled_numeric;
  if (call.distinct) {
    if (kind == AggKind::count && orderable) return Mapping{PartialOp::count_distinct, 1};
    return std::nullopt;
  }
  switch (kind) {
    case AggKind::count_star: return Mapping{PartialOp::count_rows, 0};
    case AggKind::count: return Mapping{PartialOp::count_valid, 1};
    case AggKind::sum:
    case AggKind::avg:
      if (is_integer(in) || scaled_numeric) return Mapping{PartialOp::sum_int, 1};
      // sum(float4) accumulates in float4 arithmetic in PostgreSQL: generic path.
      if (in == TypeId::float8 || (in == TypeId::float4 && kind == AggKind::avg)) {
        return Mapping{kind == AggKind::avg ? PartialOp::moments_float : PartialOp::sum_float, 1};
      }
      return std::nullopt;
    case AggKind::min:
    case AggKind::max:
      if (is_intlike(in) || scaled_numeric) return Mapping{kind == AggKind::min ? PartialOp::min_int : PartialOp::max_int, 1};
      // A stored text column's (EngineAggregator::usable says where not).
      // Not char(n): its comparison ignores trailing blanks.
      if ((in == TypeId::text || in == TypeId::varchar) && stored_text_column(call.args[0].get())) {
        return Mapping{kind == AggKind::min ? PartialOp::min_int : PartialOp::max_int, 1, /*text_rank=*/true};
      }
      if (is_float(in)) return Mapping{kind == AggKind::min ? PartialOp::min_float : PartialOp::max_float, 1};
      return std::nullopt;
    case AggKind::bool_and: return Mapping{PartialOp::min_int, 1};
    case AggKind::bool_or: return Mapping{PartialOp::max_int, 1};
    case AggKind::var_samp:
    case AggKind::var_pop:
    case AggKind::stddev_samp:
    case AggKind::stddev_pop:
      if (in == TypeId::int2 || in == TypeId::int4) return Mapping{PartialOp::moments_int, 1};
      if (is_float(in)) return Mapping{PartialOp::moments_float, 1};
      return std::nullopt;
    case AggKind::corr: case AggKind::covar_pop: case AggKind::covar_samp: case AggKind::regr_r2:
    case AggKind::regr_slope: case AggKind::regr_intercept: case AggKind::regr_count: case AggKind::regr_sxx:
    case AggKind::regr_syy: case AggKind::regr_sxy: case AggKind::regr_avgx: case AggKind::regr_avgy:
      return Mapping{PartialOp::moments2_float, 2};
    case AggKind::percentile_cont:
      if (in == TypeId::float8 && call.direct) return Mapping{PartialOp::ordered_values, 1};
      return std::nullopt;
    case AggKind::percentile_disc:
    case AggKind::ordered_nth:
    case AggKind::mode:
      if (orderable && (kind == AggKind::mode || call.direct)) return Mapping{PartialOp::ordered_values, 1};
      return std::nullopt;
    default: return std::nullopt;
  }
}

EngineAggregator::EngineAggregator(const std::vector<ExprPtr>& keys, const std::vector<AggregateCall>& aggregates,
                 std::vector<Mapping> mappings, const ExecContext& context, const TableSnapshot* table,
                 const Expr* where, RowFeed feed)
    : keys_(keys), aggregates_(aggregates), mappings_(std::move(mappings)),
      engine_table_(dynamic_cast<const EngineTableSnapshot*>(table)), table_oid_(table ? table->oid() : 0),
      table_rows_(table ? table->row_count() : UINT64_MAX), table_(table) {
  const auto t_begin = std::chrono::steady_clock::now();
  // Key mode: a single bare integer-like or text column goes straight in.
  if (keys.empty()) {
    mode_ = KeyMode::none;
  } else if (keys.size() == 1 && dynamic_cast<const ColumnExpr*>(keys[0].get())) {
    const TypeId id = keys[0]->type.id;
    key_column_ = dynamic_cast<const ColumnExpr*>(keys[0].get())->index;
    if (is_intlike(id)) mode_ = KeyMode::int_column;
    else if (id == TypeId::text || id == TypeId::varchar || id == TypeId::bpchar) mode_ = KeyMode::dict_column;
    else mode_ = KeyMode::interned;
  } else {
    mode_ = KeyMode::interned;
  }
  spec_.threads = context.threads;
  if (table != nullptr && where == nullptr) spec_.input_rows = table->row_count();
  if (mode_ == KeyMode::interned && keys.size() >= 2) {
    const auto t_pack = std::chrono::steady_clock::now();
    mode_ = plan_key_columns(table);
    estimate_us_ = since_us(t_pack);
  }
  // A text column of a join or subquery has no table to read its
  // dictionary from (dict_column's raw path): its values' codes are used.
  if (mode_ == KeyMode::interned || (mode_ == KeyMode::dict_column && table == nullptr)) mode_ = plan_evaluated_tuple();
  // A small table runs on one thread unless threads were set explicitly:
  // below kSingleThreadRows every chunk is sunk by one thread anyway (the
  // CPU engine's per-chunk threshold is 2 x 16,384 rows), so more threads
  // only add empty thread-local tables to allocate and merge, and hand-offs
  // to the worker pool. This keeps a tiny table's query near the cost of
  // its parse and plan.
  if (context.threads == 0 && table != nullptr && table->row_count() < kSingleThreadRows) spec_.threads = 1;
  spec_.memory_budget = context.memory_budget;
  spec_.cancel = context.cancel;
  spec_.compile_programs = context.jit;
  if (context.engine == "dense" || context.engine == "hash") spec_.forced_variant = context.engine;
  // Keys travel at their stored width: int2/int4/date/bool and dictionary
  // codes as int32 (the GPU reads half the bytes of int64), int8 and
  // timestamps as int64, interned codes as int64. sink() narrows evaluated
  // keys to the same width so every chunk of a query agrees.
  spec_.key_width = ColumnWidth::int64;
  if (mode_ == KeyMode::dict_column) spec_.key_width = ColumnWidth::int32;
  if (mode_ == KeyMode::int_column && narrow_int(keys[0]->type.id)) spec_.key_width = ColumnWidth::int32;
  if (mode_ == KeyMode::none) {
    // Every chunk's keys are a view of the process's shared zeros
    // (shared_zeros.hpp): a chunk costs no 8 bytes a row to fill.
    spec_.global_aggregate = true;
    spec_.key_range_known = true;
    spec_.key_min = spec_.key_max = 0;
    spec_.key_has_nulls = false;
  }
  // Key range from chunk statistics (dense variant); packed keys have theirs.
  if ((mode_ == KeyMode::int_column || mode_ == KeyMode::dict_column) && table != nullptr && table->chunk_count() > 0) {
    bool known = true, key_nulls = false;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t c = 0; c < table->chunk_count() && known; ++c) {
      const ChunkColumnStats s = table->stats(c, key_column_);
      if (!s.known) { known = false; break; }
      key_nulls |= s.null_count > 0;
      if (s.max >= s.min) { lo = std::min(lo, s.min); hi = std::max(hi, s.max); }
    }
    if (known) spec_.key_has_nulls = key_nulls;
    if (known && hi >= lo) {
      spec_.key_range_known = true;
      spec_.key_min = lo;
      spec_.key_max = hi;
    }
    uint64_t rows = table->row_count();
    spec_.estimated_groups = spec_.key_range_known ? std::min<uint64_t>(rows, static_cast<uint64_t>(hi - lo + 1)) : rows;
    if (!spec_.key_range_known || spec_.estimated_groups > (1u << 16)) {
      const auto t_estimate = std::chrono::steady_clock::now();
      estimate_from_sample(*table);
      estimate_us_ = since_us(t_estimate);
    }
  }
  // Ordered-set fractions: constants (the binder allows no column in them).
  for (const AggregateCall& a : aggregates_) {
    fractions_.push_back(a.direct ? evaluate_constant(*a.direct, context.parameters) : Value{Null{}});
  }
  // Value inputs: one per distinct aggregate argument. sum(x) and avg(x)
  // read one input, so x is evaluated, copied and staged once, and the GPU
  // keeps one set of accumulators' columns for it (TPC-H Q1's eight
  // aggregates fit its lanes only so). Ordered-set and DISTINCT aggregates
  // share inputs only among themselves (their runs take the values they
  // read; OrderedValuesRun then keeps and sorts one input's rows once for
  // all of them: a top-n's k picks, several percentiles), and an aggregate
  // with a FILTER keeps its own (the GPU folds it into the input's validity).
  enum class Sharing : uint8_t { none, plain, ordered };
  std::vector<Sharing> sharing;
  auto add_input = [&](const Expr* e, Sharing share) {
    for (size_t i = 0; share != Sharing::none && i < inputs_.size(); ++i) {
      if (sharing[i] == share && same_expression(*inputs_[i], *e)) return static_cast<int>(i);
    }
    inputs_.push_back(e);
    sharing.push_back(share);
    return static_cast<int>(inputs_.size() - 1);
  };
  for (size_t a = 0; a < aggregates_.size(); ++a) {
    PartialAggregate p;
    p.op = mappings_[a].op;
    const bool moments2 = p.op == PartialOp::moments2_float;
    const bool ordered = p.op == PartialOp::ordered_values || p.op == PartialOp::count_distinct;
    const Sharing share = aggregates_[a].filter ? Sharing::none : ordered ? Sharing::ordered : Sharing::plain;
    auto input = [&](size_t i) { return moments2 ? stored_moment_input(aggregates_[a].args[i].get()) : aggregates_[a].args[i].get(); };
    if (mappings_[a].inputs >= 1) p.input = add_input(input(0), share);
    if (mappings_[a].inputs >= 2) p.input2 = add_input(input(1), share);
    spec_.aggregates.push_back(p);
  }
  spec_.ordered_picks = ordered_picks(aggregates_, fractions_);
  text_ranks_.resize(inputs_.size());
  input_scales_ = std::vector<std::atomic<int32_t>>(inputs_.size());
  input_scale_checked_.assign(inputs_.size(), 0);
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i]->type.id != TypeId::numeric) continue;
    const std::optional<int32_t> scale = static_numeric_scale(*inputs_[i]);
    input_scales_[i] = scale.value_or(kScaleUnknown);
    input_scale_checked_[i] = scale ? 0 : 1;
  }
  compile_programs(where, feed, context);
  // min or max of text runs on ranks: looked up by the raw path's programs,
  // or made on the host from the evaluated rows' codes (prepare()).
  for (size_t a = 0; a < aggregates_.size() && usable_; ++a) {
    if (!mappings_[a].text_rank) continue;
    const auto i = static_cast<size_t>(spec_.aggregates[a].input);
    if (text_ranks_[i].order) continue;
    std::optional<TextRanks> ranks = text_ranks_of(inputs_[i], context);
    if (!ranks) usable_ = false;
    else text_ranks_[i] = std::move(*ranks);
  }
  if (!usable_) return;
  // Nominal input widths (an engine sees the real ones chunk by chunk: raw
  // stored int4 columns arrive 4 bytes wide, evaluated ones 8).
  // Bare int2/int4/date/bool columns arrive 4 bytes wide (sink_raw stores
  // them so, sink() narrows them): the tuning signature says what runs.
  for (const Expr* e : inputs_) {
    const bool narrow = dynamic_cast<const ColumnExpr*>(e) && narrow_int(e->type.id);
    spec_.value_widths.push_back(is_float(e->type.id) ? ColumnWidth::float64
                                                      : narrow ? ColumnWidth::int32 : ColumnWidth::int64);
  }
  // Inputs that are bare columns with no NULL in any chunk (statistics):
  // the GPU then keeps one row count for count(*) and count(v) and runs
  // its count+sum kernels.
  for (size_t i = 0; i < inputs_.size(); ++i) {
    // An input a program computes (a text column's ranks) carries the
    // program's validity, whatever the column's statistics say.
    const bool computed = i < spec_.value_programs.size() && !spec_.value_programs[i].empty();
    const auto* col = computed ? nullptr : dynamic_cast<const ColumnExpr*>(inputs_[i]);
    bool not_null = col != nullptr && table != nullptr && table->chunk_count() > 0;
    for (size_t c = 0; not_null && c < table->chunk_count(); ++c) {
      const ChunkColumnStats st = table->stats(c, col->index);
      not_null = st.known && st.null_count == 0;
    }
    spec_.value_not_null.push_back(not_null ? 1 : 0);
  }
  for (size_t a = 0; a < aggregates_.size(); ++a) {
    if (aggregates_[a].signature.kind == AggKind::avg && spec_.aggregates[a].op == PartialOp::moments_float &&
        !aggregates_[a].filter && float_sums_bounded(table, *inputs_[static_cast<size_t>(spec_.aggregates[a].input)])) {
      spec_.aggregates[a].op = PartialOp::sum_float;
    }
  }
  const auto t_choose = std::chrono::steady_clock::now();
  choose_engine(context);
  // The host path (sink()) evaluates WHERE and the inputs itself for a run
  // of several passes.
  auto drop_programs = [this] {
    spec_.row_filter = ColumnProgram{};
    spec_.value_programs.clear();
    spec_.key_programs.clear();
    spec_.lookup_columns.clear();
    program_columns_.clear();
    takes_where_ = false;
    where_conditions_ = input_programs_ = 0;
  };
  run_ = start_run(spec_);
  if (has_programs(spec_) && (run_->passes() != 1 || !ordered_rows_take_programs())) {
    drop_programs();
    run_ = start_run(spec_);
  }
  start_us_ = since_us(t_choose);
  statistics_us_ = since_us(t_begin) - start_us_ - estimate_us_;
}

void EngineAggregator::choose_engine(const ExecContext& context) {
  // finalize() reads the compact form (shared counts, int64 sums) of either
  // engine: less to emit, and columns that are engine arrays as they are get moved.
  spec_.compact_result = true;
  AggregateEngine* gpu = context.gpu_engine;
  if (!gpu && engine_table_) gpu = engine_table_->gpu_engine();
  const bool wants_gpu = context.engine == "auto" || context.engine == "gpu";
  // A GPU run evaluates the WHERE and input programs on the device when
  // they fit one launch; others it would take from the host's evaluation,
  // which costs more than the CPU engine's whole aggregation on every core:
  // the engine's own choice for those is the CPU engine.
  if (context.engine == "auto" && gpu && has_programs(spec_) && !gpu::programs_fit_device(spec_)) {
    not_on_gpu_ = "the WHERE and input programs are larger than one device launch takes; the CPU engine "
                  "evaluates them";
  } else if (wants_gpu && gpu) {
    // A FILTER goes to the GPU as its aggregate's input validity (sink()):
    // only count(*), which has no input, cannot take it there.
    bool filtered = false;
    AggregationSpec g = spec_;
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      if (!aggregates_[a].filter) continue;
      const PartialAggregate& p = g.aggregates[a];
      filtered |= p.input < 0;
      for (const int i : {p.input, p.input2}) {
        if (i >= 0 && static_cast<size_t>(i) < g.value_not_null.size()) g.value_not_null[static_cast<size_t>(i)] = 0;
      }
    }
    g.forced_variant = context.variant;
    g.forced_configuration = context.launch_config;
    // The tuning cache Database::open installed (none: rules only).
    g.tuning_store = process_tuning_store().load();
    // Ordered-set and DISTINCT aggregates run beside the GPU's run of the
    // others (start_run), so the GPU need only take those.
    const bool ordered = cpu::has_ordered_aggregates(g);
    const bool runs = !filtered && gpu->can_run(ordered ? cpu::OrderedValuesRun::inner_spec(g) : g);
    if (runs && context.engine == "auto" && cold_read_on_cpu(*gpu)) {
      not_on_gpu_ = "a small table whose columns are not on the GPU yet: the CPU engine answers before the device "
                    "would have its copy (the table's next read copies it)";
    } else if (runs) {
      spec_ = std::move(g);
      engine_ = gpu;
      on_gpu_ = true;
      return;
    }
    if (context.engine == "gpu") {
      not_on_gpu_ = filtered ? "count(*) has a FILTER clause, which the GPU engine does not take yet"
                             : "an input or aggregate the GPU engine does not take (an integer variance wider "
                               "than int4, wide numeric, or more accumulators than it keeps)";
    }
  } else if (context.engine == "gpu") {
    not_on_gpu_ = "this server has no usable GPU";
  }
  cpu_engine_ = make_cpu_engine();
  engine_ = cpu_engine_.get();
}

bool EngineAggregator::cold_read_on_cpu(AggregateEngine& gpu) const {
  if (engine_table_ == nullptr || table_oid_ == 0 || table_->chunk_count() == 0 ||
      table_->row_count() > kColdReadCpuRows) {
    return false;
  }
  // The first stored column the run reads: a key, else a bare input.
  int column = -1;
  if (mode_ == KeyMode::int_column || mode_ == KeyMode::dict_column) column = key_column_;
  else if (!packed_columns_.empty()) column = packed_columns_.front();
  for (size_t i = 0; column < 0 && i < inputs_.size(); ++i) {
    if (const auto* c = dynamic_cast<const ColumnExpr*>(inputs_[i])) column = c->index;
  }
  const std::optional<uint64_t> chunk = engine_table_->chunk_id(0);
  if (column < 0 || !chunk) return false;
  if (gpu.keeps(ColumnIdentity{table_oid_, *chunk, static_cast<uint32_t>(column)})) return false;
  return !gpu.note_left_elsewhere(table_oid_);
}

std::optional<EngineAggregator::TextRanks> EngineAggregator::text_ranks_of(const Expr* input,
                                                                            const ExecContext& context) const {
  const ColumnExpr* column = stored_text_column(input);
  const auto dictionary = column && column->index >= 0 && table_ ? table_->dictionary(column->index) : nullptr;
  // A column of tens of millions of distinct values (comments) would sort
  // them all before its first query: the generic path compares only the
  // values each group meets.
  if (!dictionary || dictionary->size() > kMaxRankedEntries) return std::nullopt;
  const int threads = context.threads > 0 ? context.threads : cpu::WorkerPool::shared().workers() + 1;
  return TextRanks{dictionary, dictionary_order(*dictionary, threads)};
}

void EngineAggregator::compile_programs(const Expr* where, RowFeed feed, const ExecContext& context) {
  // The raw path's conditions (wants_raw): stored chunks of one table, keys
  // the engine takes as columns, no FILTER, and every row wanted (a run
  // restricted to some groups' keys takes its rows evaluated). Ordered-set
  // and DISTINCT aggregates read the chunks' values themselves: only the
  // GPU's device collector evaluates the WHERE over them
  // (ordered_rows_take_programs), so they take programs only where a GPU may run.
  const bool gpu_may_run = (context.engine == "auto" || context.engine == "gpu") &&
                           (context.gpu_engine != nullptr || (engine_table_ && engine_table_->gpu_engine()));
  if (table_ == nullptr || mode_ == KeyMode::interned || (cpu::has_ordered_aggregates(spec_) && !gpu_may_run) ||
      context.group_key_filter != nullptr) {
    return;
  }
  for (const auto& a : aggregates_) {
    if (a.filter) return;
  }
  // Only for a caller that feeds the raw path whenever wants_raw() (and
  // takes_where()) say so: others (grouping sets) feed evaluated rows
  // (sink()), which carry no program columns.
  if (feed != RowFeed::stored_chunks) return;
  ProgramColumnMap columns;
  columns.dictionary = [this](int column) { return table_->dictionary(column); };
  columns.threads = context.threads > 0 ? context.threads : cpu::WorkerPool::shared().workers() + 1;
  columns.texts_on_device = gpu_may_run;
  ColumnProgram filter;
  if (where != nullptr) {
    auto f = compile_filter(*where, columns, context.parameters);
    if (!f) return;
    filter = std::move(*f);
  }
  // Keys that are expressions (a joined relation's values in a lookup
  // form): programs too, or the host evaluates every row.
  std::vector<ColumnProgram> key_programs;
  std::vector<std::shared_ptr<const storage::StringDictionary>> key_dictionaries(keys_.size());
  if (mode_ == KeyMode::evaluated_tuple) {
    for (size_t k = 0; k < keys_.size(); ++k) {
      auto p = compile_key(*keys_[k], columns, context.parameters, key_dictionaries[k]);
      if (!p) return;
      key_programs.push_back(std::move(*p));
    }
  }
  std::vector<ColumnProgram> programs(inputs_.size());
  size_t compiled = 0;
  std::vector<uint8_t> ranked(inputs_.size(), 0);
  for (size_t a = 0; a < aggregates_.size(); ++a) {
    if (mappings_[a].text_rank) ranked[static_cast<size_t>(spec_.aggregates[a].input)] = 1;
  }
  std::vector<TextRanks> ranks(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Expr* e = inputs_[i];
    if (ranked[i]) {
      std::optional<TextRanks> r = text_ranks_of(e, context);
      if (!r) return;
      ranks[i] = std::move(*r);
      programs[i] = compile_text_rank(stored_text_column(e)->index, columns, ranks[i].order->rank_of_code);
      ++compiled;
      continue;
    }
    if (dynamic_cast<const ColumnExpr*>(e)) continue;
    auto p = compile_input(*e, columns, context.parameters);
    if (!p) return;
    // The engine's scaled integers must be at the scale finalize reads.
    if (e->type.id == TypeId::numeric && static_numeric_scale(*e) != std::optional<int32_t>(p->scale)) return;
    programs[i] = std::move(*p);
    ++compiled;
  }
  place_lookups(filter, columns);
  for (ColumnProgram& p : programs) place_lookups(p, columns);
  for (ColumnProgram& p : key_programs) place_lookups(p, columns);
  for (size_t k = 0; k < key_programs.size(); ++k) {
    if (text_codes_[k]) text_codes_[k]->adopt(key_dictionaries[k]);
    if (keys_[k]->type.id == TypeId::numeric) numeric_scales_[k] = key_programs[k].scale;
  }
  spec_.key_programs = std::move(key_programs);
  spec_.row_filter = std::move(filter);
  if (compiled > 0) spec_.value_programs = std::move(programs);
  text_ranks_ = std::move(ranks);
  spec_.lookup_columns = std::move(columns.lookups);
  program_arrays_ = std::move(columns.arrays);
  program_columns_ = std::move(columns.table_columns);
  takes_where_ = where != nullptr;
  input_programs_ = compiled;
  const auto* conjunction = dynamic_cast<const BoolExpr*>(where);
  where_conditions_ = where == nullptr ? 0 : conjunction && conjunction->op == BoolOp::and_ ? conjunction->args.size() : 1;
}

bool EngineAggregator::ordered_rows_take_programs() const {
  if (!cpu::has_ordered_aggregates(spec_)) return true;
  // The device collector evaluates the row filter over the chunk's program
  // columns; its keys and values it reads as stored columns.
  if (!device_collector_ || !spec_.key_programs.empty() || !spec_.lookup_columns.empty() || spec_.key_tuple) return false;
  for (const PartialAggregate& a : spec_.aggregates) {
    if (!cpu::is_ordered_op(a.op)) continue;
    const auto i = static_cast<size_t>(a.input);
    if (i < spec_.value_programs.size() && !spec_.value_programs[i].empty()) return false;
  }
  return true;
}

std::unique_ptr<AggregationRun> EngineAggregator::start_run(const AggregationSpec& spec) {
  device_collector_ = false;
  if (!on_gpu_ || !cpu::has_ordered_aggregates(spec)) return engine_->start(spec);
  // Ordered-set aggregates by a key tuple beside the GPU: the tuple ids are
  // given on the host, and both runs take them as one int64 key.
  if (spec.key_tuple) {
    return std::make_unique<cpu::TupleKeyRun>(spec, [this](const AggregationSpec& inner) { return start_run(inner); });
  }
  // On the GPU: its run aggregates the rest; the ordered aggregates' rows
  // are kept and sorted by (key, code) on the device, over its resident
  // columns (no host work per row). Where the device cannot take them
  // (a table of more rows than one device sort takes), they are partitioned
  // by group on the host and sorted by the device's segmented sort when
  // there are enough of them to pay for the copies.
  // On one device (GpuEngine::primary): the collector's rows and the run's
  // chunks must be on the same device's column cache.
  AggregateEngine* gpu = engine_;
  std::unique_ptr<OrderedRowsCollector> device;
  if (auto* g = dynamic_cast<gpu::GpuEngine*>(gpu); g != nullptr) {
    gpu = &g->primary();
    if (table_rows_ != UINT64_MAX) device = gpu::make_device_ordered_rows(g->primary(), spec, table_rows_);
  }
  device_collector_ = device != nullptr;
  return std::make_unique<cpu::OrderedValuesRun>(
      spec, [gpu](const AggregationSpec& inner) { return gpu->start(inner); },
      [](uint64_t* codes, size_t n, const uint64_t* offsets, size_t groups) {
        return n >= gpu::kDeviceSegmentSortMinCodes && gpu::sort_segments_on_device(codes, n, offsets, groups);
      },
      "GPU segmented sort", std::move(device));
}

// Group-count estimate from a sample of key values spread over every chunk
// (executor/estimate/), used to size the engine's tables and shown by EXPLAIN.
void EngineAggregator::estimate_from_sample(const TableSnapshot& table) {
  const uint64_t total = table.row_count();
  if (total == 0) return;
  if (take_kept_estimate(table, {key_column_})) return;
  const uint64_t stride = std::max<uint64_t>(1, total / kSampleRows);
  std::vector<uint64_t> hashes, previous;
  // A key column sketched in every chunk is estimated by its merged sketch
  // alone unless the sample is the whole table (group_count_estimator): its
  // rows are then not read (a cold column was read whole for nothing).
  bool sketched = stride > 1;
  for (size_t c = 0; sketched && c < table.chunk_count(); ++c) {
    const ChunkColumnStats st = table.stats(c, key_column_);
    sketched = !st.hll.empty() && estimate::HllSketch::deserialize(st.hll).has_value();
  }
  if (!sketched) {
    sample_hashes(table, {key_column_}, stride, [](const storage::ChunkBatch& batch, size_t r) -> uint64_t {
      const auto& col = batch.columns[0];
      if (col.is_null(r)) return 0x6e756c6cULL;
      return sample_hash(stored_int_at(col, r));
    }, hashes, previous);
  }
  estimate_from_hashes(table, std::move(hashes), std::move(previous), /*use_sketches=*/true, {key_column_});
}

bool EngineAggregator::take_kept_estimate(const TableSnapshot& table, const std::vector<int>& columns) {
  const auto kept = estimate::cached_estimate(table.version(), columns);
  if (!kept) return false;
  spec_.estimated_groups = kept->groups;
  estimate_source_ = kept->source;
  return true;
}

void EngineAggregator::estimate_from_hashes(const TableSnapshot& table, std::vector<uint64_t> hashes,
                                            std::vector<uint64_t> previous, bool use_sketches, const std::vector<int>& columns) {
  estimate::EstimateInput input;
  input.sample_hashes = hashes;
  input.previous_hashes = previous;
  input.total_rows = table.row_count();
  // The key column's per-chunk sketches, merged: a 32K-row sample alone
  // cannot tell 85K groups from 8M when nearly every sampled key is unique.
  std::vector<estimate::HllSketch> chunk_sketches;
  bool has_nulls = false;
  for (size_t c = 0; use_sketches && c < table.chunk_count(); ++c) {
    const ChunkColumnStats st = table.stats(c, key_column_);
    auto sketch = st.hll.empty() ? std::nullopt : estimate::HllSketch::deserialize(st.hll);
    if (!sketch) {
      chunk_sketches.clear();
      break;
    }
    chunk_sketches.push_back(std::move(*sketch));
    has_nulls |= st.null_count > 0;
  }
  std::optional<estimate::HllSketch> merged;
  if (!chunk_sketches.empty()) merged = estimate::merge_sketches(chunk_sketches);
  const bool key_has_nulls[1] = {has_nulls};
  if (merged) {
    input.key_column_sketches = std::span<const estimate::HllSketch>(&*merged, 1);
    input.key_column_has_nulls = std::span<const bool>(key_has_nulls, 1);
  }
  const auto estimate = estimate::estimate_group_count(input);
  spec_.estimated_groups = static_cast<uint64_t>(std::max(1.0, estimate.groups));
  estimate_source_ = std::string(estimate::source_name(estimate.source));
  estimate::keep_estimate(table.version(), columns, {spec_.estimated_groups, estimate_source_});
}

std::vector<std::string> EngineAggregator::explain() const {
  char buf[512];
  std::snprintf(buf, sizeof buf, "Engine: %s, variant: %s, configuration: %s, passes: %llu", report_.engine.c_str(),
                report_.variant.c_str(), report_.configuration.c_str(),
                static_cast<unsigned long long>(report_.passes));
  std::vector<std::string> lines{buf};
  if (mode_ == KeyMode::packed) {
    uint32_t bits = 0;
    for (const KeyPart& p : spec_.key_parts) bits = std::max(bits, p.offset + p.bits);
    lines.push_back("Group key: packed " + std::to_string(spec_.key_parts.size()) + " columns, " +
                    std::to_string(bits) + " bits");
  } else if (mode_ == KeyMode::tuple) {
    lines.push_back("Group key: tuple of " + std::to_string(spec_.key_parts.size()) +
                    " columns, grouped by the engine with equality on each");
  } else if (mode_ == KeyMode::evaluated_tuple) {
    lines.push_back("Group key: tuple of " + std::to_string(keys_.size()) +
                    (spec_.key_programs.empty() ? " evaluated values" : " key programs the engine evaluates") +
                    ", grouped by the engine with equality on each");
  } else if (mode_ == KeyMode::interned) {
    lines.push_back("Group key: query-local codes interned on the host");
  }
  if (!not_on_gpu_.empty()) lines.push_back("GPU engine not used: " + not_on_gpu_);
  if (filtered_out_ > 0) {
    std::snprintf(buf, sizeof buf, "HAVING on partial states: %llu groups dropped before their columns were built (%.3f ms)",
                  static_cast<unsigned long long>(filtered_out_), filter_us_ / 1000.0);
    lines.push_back(buf);
  }
  if (top_dropped_ > 0) {
    std::snprintf(buf, sizeof buf, "ORDER BY ... LIMIT %zu on partial states: %llu groups dropped before their aggregates were built (%.3f ms)",
                  top_groups_.count, static_cast<unsigned long long>(top_dropped_), top_us_ / 1000.0);
    lines.push_back(buf);
  }
  if (where_conditions_ > 0 || input_programs_ > 0) {
    const std::string where = on_gpu_ ? "GPU engine" : "CPU engine";
    if (where_conditions_ > 0) {
      lines.push_back("Filter on " + where + ": " + std::to_string(where_conditions_) +
                      (where_conditions_ == 1 ? " condition" : " conditions"));
    }
    if (input_programs_ > 0) {
      lines.push_back("Aggregate inputs on " + where + ": " + std::to_string(input_programs_) +
                      (input_programs_ == 1 ? " expression" : " expressions"));
    }
  }
  if (on_gpu_ && scanned_columns_ > 0) {
    lines.push_back("Host reads: " + std::to_string(scanned_columns_ - held_columns_) + " of " +
                    std::to_string(scanned_columns_) + " chunk columns (the others resident on the GPU)");
  }
  lines.push_back("Estimated groups: " + (spec_.estimated_groups ? std::to_string(spec_.estimated_groups) + " (" + estimate_source_ + ")" : std::string("unknown")) +
                  ", actual groups: " + std::to_string(report_.groups) +
                  (spec_.key_range_known ? ", key range [" + std::to_string(spec_.key_min) + ", " + std::to_string(spec_.key_max) + "]" : ""));
  std::snprintf(buf, sizeof buf, "Aggregate rows: %llu, sink time: %.3f ms, finalize time: %.3f ms",
                static_cast<unsigned long long>(report_.rows), report_.sink_ms, report_.finalize_ms);
  lines.push_back(buf);
  for (const std::string& d : report_.details) lines.push_back(d);
  // Host time around the engine: what a query pays before its first chunk
  // and after the engine's result, beside the engine's own times.
  std::snprintf(buf, sizeof buf,
                "Planner side: statistics %.1f us, estimate %.1f us, engine start %.1f us; result columns %.1f us",
                statistics_us_, estimate_us_, start_us_, columns_us_);
  std::string line = buf;
  for (size_t part = 0; part < column_parts_us_.size(); ++part) {
    std::snprintf(buf, sizeof buf, part == 0 ? " (keys %.1f" : part == 1 ? ", aggregates %.1f" : " / %.1f", column_parts_us_[part]);
    line += buf;
  }
  if (!column_parts_us_.empty()) line += "; " + std::to_string(column_faults_) + " page faults)";
  lines.push_back(line);
  return lines;
}

}  // namespace engine_aggregation

using engine_aggregation::EngineAggregator;
using engine_aggregation::map_aggregate;
using engine_aggregation::Mapping;

bool engine_can_run(const std::vector<AggregateCall>& aggregates) {
  for (const auto& a : aggregates) {
    if (!map_aggregate(a)) return false;
  }
  return true;
}

std::unique_ptr<GroupAggregator> make_engine_aggregator(const std::vector<ExprPtr>& keys,
                                                        const std::vector<AggregateCall>& aggregates,
                                                        const ExecContext& context, const TableSnapshot* table,
                                                        const Expr* where, RowFeed feed) {
  std::vector<Mapping> mappings;
  for (const auto& a : aggregates) {
    auto m = map_aggregate(a);
    if (!m) return nullptr;
    mappings.push_back(*m);
    // A stored numeric column without a declared scale may hold values of
    // every scale (and the raw stored path reads declared scales only).
    const auto* column = a.args.empty() ? nullptr : dynamic_cast<const ColumnExpr*>(a.args[0].get());
    if (table != nullptr && column && column->type.id == TypeId::numeric && column->type.typmod < 4) return nullptr;
  }
  auto engine = std::make_unique<EngineAggregator>(keys, aggregates, std::move(mappings), context, table, where, feed);
  if (!engine->usable()) return nullptr;
  return engine;
}

}  // namespace tally::executor
