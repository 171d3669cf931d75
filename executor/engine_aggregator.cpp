// The planner side of the engine seam: turns a query's group keys and
// aggregates into fixed-width engine input (aggregate_engine.hpp), runs an
// engine, and finalizes its partial states into PostgreSQL values through
// finalize.hpp. Shapes an engine cannot take (DISTINCT, ordered-set
// aggregates, min/max of text, ...) are left to the generic path.
//
// Engine choice (SET tally.engine): `auto` and `gpu` run on the GPU engine
// when the database has one and it can run the aggregation (integer keys and
// inputs; count, sum, avg, min, max, bool_and/or; no FILTER), else on the CPU
// engine. `gpu` on an aggregation the GPU cannot run still answers, on the
// CPU, and EXPLAIN ANALYZE says why: the SQL is valid, only the placement
// differs, and PostgreSQL has no error for "this engine cannot". `cpu` always
// runs on the CPU engine.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "executor/aggregate_engine.hpp"
#include "executor/database.hpp"
#include "executor/finalize.hpp"
#include "executor/group_aggregator.hpp"
#include "executor/select_plan.hpp"
#include "executor/estimate/group_count_estimator.hpp"

namespace tally::executor {
namespace {

bool is_intlike(TypeId id) {
  return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8 || id == TypeId::date ||
         id == TypeId::timestamp || id == TypeId::timestamptz || id == TypeId::boolean;
}

// Integer-like types stored in at most 4 bytes: engines take them as int32.
bool narrow_int(TypeId id) {
  return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::date || id == TypeId::boolean;
}

// How one aggregate maps to partial ops, and how its value is finalized.
struct Mapping {
  PartialOp op;
  int inputs = 1;
};

std::optional<Mapping> map_aggregate(const AggregateCall& call) {
  if (call.distinct) return std::nullopt;
  const AggKind kind = call.signature.kind;
  const TypeId in = call.signature.arg_types.empty() ? TypeId::unknown : call.signature.arg_types[0].id;
  const bool scaled_numeric = in == TypeId::numeric && call.args[0]->type.typmod >= 4 &&
                              dynamic_cast<const ColumnExpr*>(call.args[0].get()) != nullptr &&
                              call.args[0]->type.numeric_precision() <= 18;
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
    default: return std::nullopt;
  }
}

// Query-local codes for keys that are not a single integer or dictionary column.
class KeyInterner {
 public:
  int64_t code(const std::vector<Value>& tuple, uint64_t hash) {
    auto range = index_.equal_range(hash);
    for (auto it = range.first; it != range.second; ++it) {
      const auto& known = tuples_[static_cast<size_t>(it->second)];
      bool same = true;
      for (size_t k = 0; k < tuple.size() && same; ++k) {
        const bool n1 = is_null(known[k]), n2 = is_null(tuple[k]);
        same = n1 == n2 && (n1 || compare_values(known[k], tuple[k]) == 0);
      }
      if (same) return it->second;
    }
    const auto id = static_cast<int64_t>(tuples_.size());
    tuples_.push_back(tuple);
    index_.emplace(hash, id);
    return id;
  }
  const std::vector<Value>& tuple(int64_t code) const { return tuples_[static_cast<size_t>(code)]; }

 private:
  std::unordered_multimap<uint64_t, int64_t> index_;
  std::vector<std::vector<Value>> tuples_;
};

enum class KeyMode { none, int_column, dict_column, interned };

// Tables with fewer rows than this are aggregated by one thread (see the
// constructor): for a small table, handing parts to the worker pool costs
// more than the rows (group_by_round_trip_bench --rows 1 shows it).
constexpr uint64_t kSingleThreadRows = uint64_t{1} << 15;

class EngineAggregator final : public GroupAggregator {
 public:
  EngineAggregator(const std::vector<ExprPtr>& keys, const std::vector<AggregateCall>& aggregates,
                   std::vector<Mapping> mappings, const ExecContext& context, const TableSnapshot* table)
      : keys_(keys), aggregates_(aggregates), mappings_(std::move(mappings)),
        engine_table_(dynamic_cast<const EngineTableSnapshot*>(table)), table_oid_(table ? table->oid() : 0),
        table_rows_(table ? table->row_count() : UINT64_MAX) {
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
    // A small table runs on one thread unless threads were set explicitly:
    // below kSingleThreadRows every chunk is sunk by one thread anyway (the
    // CPU engine's per-chunk threshold is 2 x 16,384 rows), so more threads
    // only add empty thread-local tables to allocate and merge, and hand-offs
    // to the worker pool. This keeps a tiny table's query near the cost of
    // its parse and plan (issue 4: the planner sends tiny tables to the CPU).
    if (context.threads == 0 && table != nullptr && table->row_count() < kSingleThreadRows) spec_.threads = 1;
    spec_.memory_budget = context.memory_budget;
    if (context.engine == "dense" || context.engine == "hash") spec_.forced_variant = context.engine;
    // Keys travel at their stored width: int2/int4/date/bool and dictionary
    // codes as int32 (the GPU reads half the bytes of int64), int8 and
    // timestamps as int64, interned codes as int64. sink() narrows evaluated
    // keys to the same width so every chunk of a query agrees.
    spec_.key_width = ColumnWidth::int64;
    if (mode_ == KeyMode::dict_column) spec_.key_width = ColumnWidth::int32;
    if (mode_ == KeyMode::int_column && narrow_int(keys[0]->type.id)) spec_.key_width = ColumnWidth::int32;
    if (mode_ == KeyMode::none) {
      spec_.key_range_known = true;
      spec_.key_min = spec_.key_max = 0;
    }
    // Key range from chunk statistics (dense variant).
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
    // Value inputs: one per aggregate argument.
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      PartialAggregate p;
      p.op = mappings_[a].op;
      if (mappings_[a].inputs >= 1) { p.input = static_cast<int>(inputs_.size()); inputs_.push_back(aggregates_[a].args[0].get()); }
      if (mappings_[a].inputs >= 2) { p.input2 = static_cast<int>(inputs_.size()); inputs_.push_back(aggregates_[a].args[1].get()); }
      spec_.aggregates.push_back(p);
    }
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
    for (const Expr* e : inputs_) {
      const auto* col = dynamic_cast<const ColumnExpr*>(e);
      bool not_null = col != nullptr && table != nullptr && table->chunk_count() > 0;
      for (size_t c = 0; not_null && c < table->chunk_count(); ++c) {
        const ChunkColumnStats st = table->stats(c, col->index);
        not_null = st.known && st.null_count == 0;
      }
      spec_.value_not_null.push_back(not_null ? 1 : 0);
    }
    const auto t_choose = std::chrono::steady_clock::now();
    choose_engine(context);
    run_ = engine_->start(spec_);
    start_us_ = since_us(t_choose);
    statistics_us_ = since_us(t_begin) - start_us_ - estimate_us_;
  }

  static double since_us(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
  }

  void choose_engine(const ExecContext& context) {
    AggregateEngine* gpu = context.gpu_engine;
    if (!gpu && engine_table_) gpu = engine_table_->gpu_engine();
    const bool wants_gpu = context.engine == "auto" || context.engine == "gpu";
    if (wants_gpu && gpu) {
      bool filtered = false;
      for (const auto& a : aggregates_) filtered |= a.filter != nullptr;
      AggregationSpec g = spec_;
      g.forced_variant = context.variant;
      g.forced_configuration = context.launch_config;
      // The tuning cache Database::open installed (none: rules only).
      g.tuning_store = process_tuning_store().load();
      if (!filtered && gpu->can_run(g)) {
        spec_ = std::move(g);
        engine_ = gpu;
        on_gpu_ = true;
        return;
      }
      if (context.engine == "gpu") {
        not_on_gpu_ = filtered ? "an aggregate has a FILTER clause, which the GPU engine does not take yet"
                               : "an input or aggregate the GPU engine does not take (floating point, variance or "
                                 "regression, wide numeric)";
      }
    } else if (context.engine == "gpu") {
      not_on_gpu_ = "this server has no usable GPU";
    }
    cpu_engine_ = make_cpu_engine();
    engine_ = cpu_engine_.get();
    // finalize() reads the compact form (shared counts, int64 sums): less to
    // emit, and columns that are engine arrays as they are get moved.
    spec_.compact_result = true;
  }

  // Group-count estimate from a sample of key values spread over every chunk
  // (executor/estimate/), used to size the engine's tables and shown by EXPLAIN.
  void estimate_from_sample(const TableSnapshot& table) {
    constexpr uint64_t kSampleRows = 1 << 15;  // enough for GEE/Chao within a few %, cheap to read
    const uint64_t total = table.row_count();
    if (total == 0) return;
    const uint64_t stride = std::max<uint64_t>(1, total / kSampleRows);
    std::vector<uint64_t> hashes, previous;
    for (size_t c = 0; c < table.chunk_count(); ++c) {
      auto batch = table.read_chunk(c, {key_column_});
      const auto& col = batch->columns[0];
      auto key_at = [&](size_t r) -> uint64_t {
        if (col.is_null(r)) return 0x6e756c6cULL;
        int64_t v;
        switch (col.type.id) {
          case TypeId::int2: v = col.values<int16_t>()[r]; break;
          case TypeId::boolean: v = col.values<uint8_t>()[r]; break;
          case TypeId::int8: case TypeId::timestamp: case TypeId::timestamptz: v = col.values<int64_t>()[r]; break;
          default: v = col.values<int32_t>()[r]; break;
        }
        uint64_t x = static_cast<uint64_t>(v) * 0x9E3779B97F4A7C15ULL;
        return x ^ (x >> 29);
      };
      for (size_t r = 0; r < col.rows; r += stride) {
        hashes.push_back(key_at(r));
        previous.push_back(r > 0 ? key_at(r - 1) : ~hashes.back());
      }
    }
    estimate::EstimateInput input;
    input.sample_hashes = hashes;
    input.previous_hashes = previous;
    input.total_rows = total;
    // The key column's per-chunk sketches, merged: a 32K-row sample alone
    // cannot tell 85K groups from 8M when nearly every sampled key is unique.
    std::vector<estimate::HllSketch> chunk_sketches;
    bool has_nulls = false;
    for (size_t c = 0; c < table.chunk_count(); ++c) {
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
  }

  int passes() const override { return run_->passes(); }
  void begin_pass(int pass) override { run_->begin_pass(pass); }

  bool wants_raw() const override {
    // Raw chunks work when keys and inputs are bare columns (no expression to evaluate) and no FILTER.
    if (mode_ == KeyMode::interned) return false;
    for (const Expr* e : inputs_) {
      if (!dynamic_cast<const ColumnExpr*>(e)) return false;
    }
    for (const auto& a : aggregates_) {
      if (a.filter) return false;
    }
    return run_->passes() == 1;
  }

  void sink_raw(const storage::ChunkBatch& batch, const std::vector<int>& scan_columns) override {
    auto column_of = [&](int table_column) -> const storage::ColumnVector& {
      for (size_t i = 0; i < scan_columns.size(); ++i) {
        if (scan_columns[i] == table_column) return batch.columns[i];
      }
      throw Error(SqlState::internal_error, "scan column missing");
    };
    ChunkInput in;
    in.rows = batch.rows;
    std::vector<std::vector<int32_t>> widened;
    widened.reserve(inputs_.size() + 1);
    // Stored columns carry their identity, so the GPU engine can keep them
    // resident in its device column cache.
    std::optional<uint64_t> chunk_id;
    if (on_gpu_ && engine_table_) chunk_id = engine_table_->chunk_id_of(batch);
    auto identity_of = [&](int table_column) {
      ColumnIdentity id;
      if (chunk_id && table_oid_ != 0) id = ColumnIdentity{table_oid_, *chunk_id, static_cast<uint32_t>(table_column)};
      return id;
    };
    auto view_of = [&](const storage::ColumnVector& col) {
      ColumnView v;
      v.validity = col.has_nulls() ? col.validity.data() : nullptr;
      switch (col.type.id) {
        case TypeId::int2: {
          widened.emplace_back(col.rows);
          for (size_t r = 0; r < col.rows; ++r) widened.back()[r] = col.values<int16_t>()[r];
          v.width = ColumnWidth::int32;
          v.data = widened.back().data();
          break;
        }
        case TypeId::boolean: {
          widened.emplace_back(col.rows);
          for (size_t r = 0; r < col.rows; ++r) widened.back()[r] = col.values<uint8_t>()[r];
          v.width = ColumnWidth::int32;
          v.data = widened.back().data();
          break;
        }
        case TypeId::float4: v.width = ColumnWidth::float32; v.data = col.data.data(); break;
        case TypeId::float8: v.width = ColumnWidth::float64; v.data = col.data.data(); break;
        case TypeId::int8: case TypeId::timestamp: case TypeId::timestamptz: case TypeId::numeric:
          v.width = ColumnWidth::int64; v.data = col.data.data(); break;
        default: v.width = ColumnWidth::int32; v.data = col.data.data(); break;  // int4, date, text codes
      }
      return v;
    };
    std::vector<int64_t> zero_keys;
    if (mode_ == KeyMode::none) {
      zero_keys.assign(batch.rows, 0);
      in.keys = ColumnView{ColumnWidth::int64, zero_keys.data(), nullptr};
    } else {
      const auto& key = column_of(key_column_);
      in.keys = view_of(key);
      in.keys.identity = identity_of(key_column_);
      if (mode_ == KeyMode::dict_column && key.dictionary) dictionary_ = key.dictionary;
    }
    for (const Expr* e : inputs_) {
      const int column = dynamic_cast<const ColumnExpr*>(e)->index;
      in.values.push_back(view_of(column_of(column)));
      in.values.back().identity = identity_of(column);
    }
    in.filters.assign(aggregates_.size(), nullptr);
    if (in.keys.width == ColumnWidth::int32) in.keys.width = ColumnWidth::int32;
    run_->sink(in);
  }

  void sink(const EvalInput& rows) override {
    ChunkInput in;
    in.rows = rows.rows;
    // Keys.
    std::vector<int64_t> keys(rows.rows, 0);
    std::vector<uint8_t> key_valid;
    if (mode_ == KeyMode::int_column) {
      const Vector v = keys_[0]->evaluate(rows);
      std::copy(v.ints.begin(), v.ints.end(), keys.begin());
      if (!v.nulls.empty()) {
        key_valid.resize(rows.rows);
        for (size_t r = 0; r < rows.rows; ++r) key_valid[r] = v.nulls[r] ? 0 : 1;
      }
    } else if (mode_ != KeyMode::none) {
      // Text columns arrive as strings here (after WHERE): intern them too.
      std::vector<Vector> values;
      for (const auto& k : keys_) values.push_back(k->evaluate(rows));
      std::vector<Value> tuple(keys_.size());
      for (size_t r = 0; r < rows.rows; ++r) {
        uint64_t h = 0x9E37;
        for (size_t k = 0; k < keys_.size(); ++k) {
          tuple[k] = values[k].get(r);
          h = (h * 0x100000001b3ULL) ^ hash_value(tuple[k]);
        }
        keys[r] = interner_.code(tuple, h);
      }
      interned_ = true;
    }
    std::vector<int32_t> narrow_keys;
    if (spec_.key_width == ColumnWidth::int32 && mode_ == KeyMode::int_column && !interned_) {
      narrow_keys.assign(keys.begin(), keys.end());
      in.keys = ColumnView{ColumnWidth::int32, narrow_keys.data(), key_valid.empty() ? nullptr : key_valid.data()};
    } else {
      in.keys = ColumnView{ColumnWidth::int64, keys.data(), key_valid.empty() ? nullptr : key_valid.data()};
    }
    // Values.
    std::vector<Vector> evaluated;
    evaluated.reserve(inputs_.size());
    std::vector<std::vector<uint8_t>> validity;
    validity.reserve(inputs_.size());
    std::vector<std::vector<int64_t>> scaled;
    std::vector<std::vector<int32_t>> narrowed;
    narrowed.reserve(inputs_.size());
    scaled.reserve(inputs_.size());
    for (const Expr* e : inputs_) {
      evaluated.push_back(e->evaluate(rows));
      Vector& v = evaluated.back();
      ColumnView view;
      switch (physical_of(v.type.id)) {
        case Physical::floating: view.width = ColumnWidth::float64; view.data = v.floats.data(); break;
        case Physical::numeric: {
          scaled.emplace_back(v.count);
          const int scale = v.type.numeric_scale();
          for (size_t r = 0; r < v.count; ++r) {
            if (!v.null_at(r)) scaled.back()[r] = static_cast<int64_t>(v.numerics[r].rescaled(scale).mantissa);
          }
          view.width = ColumnWidth::int64;
          view.data = scaled.back().data();
          break;
        }
        case Physical::text: {
          scaled.emplace_back(v.count, 0);  // count(x) reads validity only
          view.width = ColumnWidth::int64;
          view.data = scaled.back().data();
          break;
        }
        default:
          if (spec_.value_widths[in.values.size()] == ColumnWidth::int32) {
            narrowed.emplace_back(v.ints.begin(), v.ints.end());  // int2/int4/date/bool values fit
            view.width = ColumnWidth::int32;
            view.data = narrowed.back().data();
          } else {
            view.width = ColumnWidth::int64;
            view.data = v.ints.data();
          }
          break;
      }
      if (!v.nulls.empty()) {
        validity.emplace_back(v.count);
        for (size_t r = 0; r < v.count; ++r) validity.back()[r] = v.nulls[r] ? 0 : 1;
        view.validity = validity.back().data();
      }
      in.values.push_back(view);
    }
    std::vector<std::vector<uint8_t>> masks;
    masks.reserve(aggregates_.size());
    for (const auto& a : aggregates_) {
      if (!a.filter) { in.filters.push_back(nullptr); continue; }
      const Vector f = a.filter->evaluate(rows);
      masks.emplace_back(rows.rows);
      for (size_t r = 0; r < rows.rows; ++r) masks.back()[r] = (!f.null_at(r) && f.ints[r]) ? 1 : 0;
      in.filters.push_back(masks.back().data());
    }
    run_->sink(in);
  }

  void allow_deferred_avg(std::vector<uint8_t> columns) override { deferrable_ = std::move(columns); }

  size_t finalize(std::vector<Vector>& columns) override {
    AggregationResult result = run_->finalize();
    report_ = run_->report();
    const auto t_columns = std::chrono::steady_clock::now();
    struct Timed {
      double& us;
      std::chrono::steady_clock::time_point t;
      ~Timed() { us = since_us(t); }
    } timed{columns_us_, t_columns};
    note_aggregation(report_.engine, report_.variant);  // the query log line names them
    count(on_gpu_ ? engine_counters().gpu_aggregations : engine_counters().cpu_aggregations);
    size_t groups = result.groups();
    // An engine may answer no input with no state arrays at all (the CPU
    // engine's compact form over an empty table did, and a GROUP BY over it
    // then read past the end): every aggregate gets its (empty) arrays, and
    // a count source that names a missing aggregate is its own.
    if (result.states.size() < spec_.aggregates.size()) result.states.resize(spec_.aggregates.size());
    if (!result.count_source.empty()) {
      result.count_source.resize(spec_.aggregates.size(), -1);
      for (size_t a = 0; a < result.count_source.size(); ++a) {
        const int source = result.count_source[a];
        if (source < 0 || static_cast<size_t>(source) >= spec_.aggregates.size()) result.count_source[a] = static_cast<int>(a);
      }
    }
    const bool global = keys_.empty();
    const bool empty_global = global && groups == 0;  // its one group counts no row
    if (empty_global) {
      // A global aggregate returns one row even without input (in the full
      // form: every array below gets its one entry).
      result.count_source.clear();
      result.keys.push_back(0);
      result.key_valid.push_back(1);
      for (size_t a = 0; a < spec_.aggregates.size(); ++a) {
        PartialStates& s = result.states[a];
        s.count.push_back(0); s.sum_int.push_back(0); s.sum2_int.push_back(0); s.sum_float.push_back(0);
        s.extreme_int.push_back(0); s.extreme_float.push_back(0);
        s.n.push_back(0); s.sx.push_back(0); s.sxx.push_back(0); s.sy.push_back(0); s.syy.push_back(0); s.sxy.push_back(0);
        s.sum_int64.clear();
      }
      groups = 1;
    }
    // Keys.
    for (size_t k = 0; k < keys_.size(); ++k) {
      Vector v(keys_[k]->type);
      const bool int_keys = !interned_ && mode_ != KeyMode::interned && physical_of(v.type.id) != Physical::text;
      if (int_keys && keys_.size() == 1 && result.keys.size() == groups) {
        v.ints = std::move(result.keys);  // the engine's keys are the column (no copy)
        v.count = groups;
      } else {
        v.resize(groups);
        if (int_keys) std::copy(result.keys.begin(), result.keys.begin() + static_cast<long>(groups), v.ints.begin());
      }
      if (int_keys) {
        // At most one group (the NULL key's) is marked: find it with memchr
        // rather than test every group.
        const uint8_t* valid = result.key_valid.data();
        const size_t marked = std::min(groups, result.key_valid.size());
        // (memchr of a null pointer is undefined even for 0 bytes: no group, no key_valid.)
        for (const void* at = marked > 0 ? std::memchr(valid, 0, marked) : nullptr; at != nullptr;) {
          const auto g = static_cast<size_t>(static_cast<const uint8_t*>(at) - valid);
          v.set_null(g);
          at = g + 1 < marked ? std::memchr(valid + g + 1, 0, marked - g - 1) : nullptr;
        }
        columns.push_back(std::move(v));
        continue;
      }
      for (size_t g = 0; g < groups; ++g) {
        if (!result.key_valid[g]) { v.set_null(g); continue; }
        const int64_t key = result.keys[g];
        if (interned_ || mode_ == KeyMode::interned) {
          v.set(g, interner_.tuple(key)[k]);
        } else if (mode_ == KeyMode::dict_column) {
          v.texts[g] = std::string(dictionary_->at(static_cast<int32_t>(key)));
        } else {
          v.ints[g] = key;
        }
      }
      columns.push_back(std::move(v));
    }
    // Aggregates through the shared finalizer.
    const std::vector<int>& count_source = result.count_source;
    // Counts moved into a shared buffer, by source aggregate (see below).
    std::vector<std::shared_ptr<std::vector<int64_t>>> shared_counts(result.states.size());
    for (size_t a = 0; a < aggregates_.size(); ++a) {
      const AggregateCall& call = aggregates_[a];
      PartialStates& s = result.states[a];
      const SqlType out_type = call.signature.result_type;
      const TypeId in = call.signature.arg_types.empty() ? TypeId::unknown : call.signature.arg_types[0].id;
      const int scale = in == TypeId::numeric && call.args[0]->type.typmod >= 4 ? call.args[0]->type.numeric_scale() : 0;
      // The shared column finalizer: no Value per group (finalize.hpp).
      Vector v(out_type);
      const ColumnFinal final{call.signature.kind, in, scale};
      if (count_source.empty() && narrow_int_sums(call, s, groups, table_rows_)) {
        // The GPU's full form (own count, 128-bit sums) of a count, sum or
        // avg of int2/int4: as the compact form, so the column takes the
        // arrays (no zero-filled column, no pass per group).
        const size_t column = keys_.size() + a;
        const bool defer = column < deferrable_.size() && deferrable_[column] != 0;
        // No group of an input without NULLs (chunk statistics) has an
        // empty count, but for a global aggregate over no row: no scan of the counts.
        const PartialAggregate& p = spec_.aggregates[a];
        const bool not_null = !empty_global && p.input >= 0 &&
                              static_cast<size_t>(p.input) < spec_.value_not_null.size() &&
                              spec_.value_not_null[static_cast<size_t>(p.input)] != 0;
        finalize_compact_column(final, s, s.count, /*count_movable=*/true, groups, v,
                                not_null ? std::optional<bool>(false) : std::nullopt, defer);
      } else if (count_source.empty()) {
        finalize_column(final, s, groups, v);
      } else {
        // Compact form: this aggregate's count may be an earlier one's; it
        // may be moved into the column when no later aggregate reads it.
        const int source = count_source[a];
        bool read_later = false, shared = source != static_cast<int>(a);
        for (size_t b = a + 1; b < count_source.size(); ++b) read_later |= count_source[b] == source;
        shared |= read_later;
        // A count shared by several aggregates counts every row of its group
        // (that is why it is shared), so no group's is 0: no scan of it.
        const size_t column = keys_.size() + a;
        const bool defer = column < deferrable_.size() && deferrable_[column] != 0;
        // A streamed count column or avg whose count a later aggregate reads
        // shares it (the array goes into a shared buffer once) instead of
        // copying it: count(*) next to avg(v) copied 64 MB at 8M groups.
        std::vector<int64_t>& source_count = result.states[static_cast<size_t>(source)].count;
        auto& shared_count = shared_counts[static_cast<size_t>(source)];
        const AggKind kind = call.signature.kind;
        if (defer && read_later && !shared_count && source_count.size() == groups &&
            (kind == AggKind::count_star || kind == AggKind::count || kind == AggKind::avg)) {
          shared_count = std::make_shared<std::vector<int64_t>>(std::move(source_count));
        }
        finalize_compact_column(final, s, shared_count ? *shared_count : source_count, !read_later && !shared_count,
                                groups, v, shared ? std::optional<bool>(false) : std::nullopt, defer,
                                defer ? shared_count : nullptr);
      }
      columns.push_back(std::move(v));
    }
    return groups;
  }

  // For a count, or a sum/avg of int2/int4 with 128-bit sums in `s`: whether
  // the sums all fit in int64; they then go to s.sum_int64 (the compact
  // form's; sum_int is emptied). Else (another aggregate, or a sum out of
  // the int64 range, which finalize_column reports as 22003) false, `s` unchanged.
  // `rows` bounds the rows aggregated (the table's).
  static bool narrow_int_sums(const AggregateCall& call, PartialStates& s, size_t groups, uint64_t rows) {
    const AggKind kind = call.signature.kind;
    if (kind == AggKind::count_star || kind == AggKind::count) return s.count.size() == groups;
    if (kind != AggKind::sum && kind != AggKind::avg) return false;
    const TypeId in = call.signature.arg_types.empty() ? TypeId::unknown : call.signature.arg_types[0].id;
    if ((in != TypeId::int2 && in != TypeId::int4) || s.sum_int.size() != groups || s.count.size() != groups) return false;
    // |v| <= 2^31, so a sum over fewer than 2^32 rows fits in int64 without
    // looking (PostgreSQL's int4 sum accumulates in int8 on the same ground).
    // Otherwise one pass with 64-bit operations only: a value fits when its
    // high half is its low half's sign. The comparisons of whole 128-bit
    // values this replaces were a pass of their own, most of the time a
    // GPU result of many groups spends in "result columns".
    const bool bounded = rows < (uint64_t{1} << 32);
    if (!bounded) {
      uint64_t misfit = 0;
      const __int128* sums = s.sum_int.data();
      for (size_t g = 0; g < groups; ++g) {
        const auto low = static_cast<int64_t>(sums[g]);
        const auto high = static_cast<int64_t>(sums[g] >> 64);
        misfit |= static_cast<uint64_t>(high ^ (low >> 63));
      }
      if (misfit != 0) return false;
    }
    s.sum_int64.assign(s.sum_int.begin(), s.sum_int.end());  // converts each; no zero-fill first
    s.sum_int.clear();
    return true;
  }

  std::vector<std::string> explain() const override {
    char buf[512];
    std::snprintf(buf, sizeof buf, "Engine: %s, variant: %s, configuration: %s, passes: %llu", report_.engine.c_str(),
                  report_.variant.c_str(), report_.configuration.c_str(),
                  static_cast<unsigned long long>(report_.passes));
    std::vector<std::string> lines{buf};
    if (!not_on_gpu_.empty()) lines.push_back("GPU engine not used: " + not_on_gpu_);
    lines.push_back("Estimated groups: " + (spec_.estimated_groups ? std::to_string(spec_.estimated_groups) + " (" + estimate_source_ + ")" : std::string("unknown")) +
                    ", actual groups: " + std::to_string(report_.groups) +
                    (spec_.key_range_known ? ", key range [" + std::to_string(spec_.key_min) + ", " + std::to_string(spec_.key_max) + "]" : ""));
    std::snprintf(buf, sizeof buf, "Aggregate rows: %llu, sink time: %.3f ms, finalize time: %.3f ms",
                  static_cast<unsigned long long>(report_.rows), report_.sink_ms, report_.finalize_ms);
    lines.push_back(buf);
    for (const std::string& d : report_.details) lines.push_back(d);
    // Host time around the engine: what a query pays before its first chunk
    // and after the engine's result (issue 5: end to end vs device time).
    std::snprintf(buf, sizeof buf,
                  "Planner side: statistics %.1f us, estimate %.1f us, engine start %.1f us; result columns %.1f us",
                  statistics_us_, estimate_us_, start_us_, columns_us_);
    lines.push_back(buf);
    return lines;
  }

 private:
  const std::vector<ExprPtr>& keys_;
  const std::vector<AggregateCall>& aggregates_;
  std::vector<Mapping> mappings_;
  KeyMode mode_ = KeyMode::interned;
  int key_column_ = -1;
  std::vector<const Expr*> inputs_;
  AggregationSpec spec_;
  const EngineTableSnapshot* engine_table_ = nullptr;  // null: a table without engine extras
  uint64_t table_oid_ = 0;
  uint64_t table_rows_ = UINT64_MAX;  // bounds the rows any group sums (narrow_int_sums)
  std::unique_ptr<AggregateEngine> cpu_engine_;
  AggregateEngine* engine_ = nullptr;  // cpu_engine_, or the database's GPU engine
  bool on_gpu_ = false;
  std::string not_on_gpu_;  // why `SET tally.engine = gpu` ran on the CPU
  std::unique_ptr<AggregationRun> run_;
  AggregationReport report_;
  KeyInterner interner_;
  bool interned_ = false;
  std::string estimate_source_ = "statistics";
  double statistics_us_ = 0, estimate_us_ = 0, start_us_ = 0, columns_us_ = 0;  // EXPLAIN ANALYZE
  std::shared_ptr<const storage::StringDictionary> dictionary_;
  std::vector<uint8_t> deferrable_;  // allow_deferred_avg: by finalize column
};

}  // namespace

bool engine_can_run(const std::vector<AggregateCall>& aggregates) {
  for (const auto& a : aggregates) {
    if (!map_aggregate(a)) return false;
  }
  return true;
}

std::unique_ptr<GroupAggregator> make_engine_aggregator(const std::vector<ExprPtr>& keys,
                                                        const std::vector<AggregateCall>& aggregates,
                                                        const ExecContext& context, const TableSnapshot* table) {
  std::vector<Mapping> mappings;
  for (const auto& a : aggregates) {
    auto m = map_aggregate(a);
    if (!m) return nullptr;
    mappings.push_back(*m);
  }
  return std::make_unique<EngineAggregator>(keys, aggregates, std::move(mappings), context, table);
}

}  // namespace tally::executor
