#pragma once
// EngineAggregator: the planner side of the engine seam (see
// engine_aggregator.cpp). Its members are defined by job: set-up, engine
// choice and EXPLAIN (engine_aggregator.cpp), feeding chunks to the engine
// (engine_aggregator_sink.cpp) and turning partial states into result
// columns (engine_aggregator_finalize.cpp).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "common/group_test.hpp"
#include "executor/stored_width.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/database.hpp"
#include "executor/dictionary_order.hpp"
#include "executor/group_aggregator.hpp"
#include "executor/select_plan.hpp"
#include "executor/text_key_codes.hpp"

namespace tally::executor::engine_aggregation {

inline bool is_intlike(TypeId id) {
  return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::int8 || id == TypeId::date ||
         id == TypeId::timestamp || id == TypeId::timestamptz || id == TypeId::time || id == TypeId::timetz ||
         id == TypeId::boolean;
}


// Integer-like types stored in at most 4 bytes: engines take them as int32.
inline bool narrow_int(TypeId id) {
  return id == TypeId::int2 || id == TypeId::int4 || id == TypeId::date || id == TypeId::boolean;
}

// A stored integer-like or dictionary-coded value widened to int64.
inline int64_t stored_int_at(const storage::ColumnVector& col, size_t r) {
  switch (col.type.id) {
    case TypeId::int2: return col.values<int16_t>()[r];
    case TypeId::boolean: return col.values<uint8_t>()[r];
    case TypeId::int8: case TypeId::timestamp: case TypeId::timestamptz: case TypeId::time: case TypeId::timetz:
      return col.values<int64_t>()[r];
    default: return col.values<int32_t>()[r];
  }
}

// The estimator's hash of a sampled key.
inline uint64_t sample_hash(int64_t key) {
  const uint64_t x = static_cast<uint64_t>(key) * 0x9E3779B97F4A7C15ULL;
  return x ^ (x >> 29);
}

// Rows the group-count estimate samples: enough for GEE/Chao within a few %, cheap to read.
constexpr uint64_t kSampleRows = 1 << 15;

// How one aggregate maps to partial ops, and how its value is finalized.
struct Mapping {
  PartialOp op;
  int inputs = 1;
  // min or max of text: the engine takes the minimum or maximum of each
  // value's rank in its column's dictionary order (dictionary_order.hpp).
  bool text_rank = false;
};

std::optional<Mapping> map_aggregate(const AggregateCall& call);

// The scale every value of a numeric expression has, where it is the same
// for every row: a column of declared scale, a constant, and +, - and * of
// those (PostgreSQL's dscale rules: max for + and -, the sum for *), which
// is what lets an engine sum such an expression as scaled integers. nullopt
// for anything else (division, a column without typmod, functions).
std::optional<int32_t> static_numeric_scale(const Expr& e);

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

// packed: several bare integer-like or text columns whose ranges (chunk
// statistics) fit 63 bits together; the engine packs them (KeyPart).
// tuple: such columns whose ranges do not fit (or are unknown); the engine
// groups by the tuple of their values (AggregationSpec::key_tuple).
// evaluated_tuple: keys of a join, a subquery or expressions, each integer-
// like, text (TextKeyCodes) or numeric of one scale: evaluated per chunk
// where the chunk is prepared, then grouped as a key tuple by the engine.
// interned: anything else (floats, intervals, numerics of varying scale).
enum class KeyMode { none, int_column, dict_column, packed, tuple, evaluated_tuple, interned };

// Whether the key is handed to the engine as its columns (packed or a tuple).
inline bool key_columns_mode(KeyMode m) {
  return m == KeyMode::packed || m == KeyMode::tuple || m == KeyMode::evaluated_tuple;
}

// Key columns a packed key takes at most: the GPU's pack kernel takes the
// parts as one kernel argument.
constexpr size_t kMaxPackedKeyParts = 16;

// Tables with fewer rows than this are aggregated by one thread (see the
// constructor): for a small table, handing parts to the worker pool costs
// more than the rows (group_by_round_trip_bench --rows 1 shows it).
constexpr uint64_t kSingleThreadRows = uint64_t{1} << 15;

// A table of at most this many rows whose columns the GPU does not keep is
// aggregated by the CPU engine the first time it is read, with the engine on
// "auto": on every core the CPU engine answers such a table faster than the
// GPU's first read copies its chunks to the device (a table just made by a
// CREATE TABLE AS and read once to check it). A second read of
// the same table runs on the GPU, which then keeps its columns.
constexpr uint64_t kColdReadCpuRows = uint64_t{1} << 23;

class EngineAggregator final : public GroupAggregator {
 public:
  EngineAggregator(const std::vector<ExprPtr>& keys, const std::vector<AggregateCall>& aggregates,
                   std::vector<Mapping> mappings, const ExecContext& context, const TableSnapshot* table,
                   const Expr* where = nullptr, RowFeed feed = RowFeed::evaluated);

  bool wants_raw() const override;
  bool takes_where() const override { return takes_where_; }
  std::vector<int> raw_columns(size_t chunk, const std::vector<int>& scan_columns) override;
  void sink_raw(size_t chunk, size_t rows, const storage::ChunkBatch* batch,
                const std::vector<int>& batch_columns) override;
  std::shared_ptr<PreparedWork> prepare_raw(size_t chunk, size_t rows,
                                            const std::shared_ptr<const storage::ChunkBatch>& batch,
                                            const std::vector<int>& batch_columns) const override;
  void sink_raw_prepared(PreparedWork* work) override;
  void sink(const EvalInput& rows) override;
  std::shared_ptr<PreparedWork> prepare(const EvalInput& rows) const override;
  void sink_prepared(PreparedWork* work, const EvalInput& rows) override;
  int passes() const override { return run_->passes(); }
  void begin_pass(int pass) override { run_->begin_pass(pass); }
  void allow_deferred_avg(std::vector<uint8_t> columns) override { deferrable_ = std::move(columns); }
  void set_group_filter(std::vector<GroupFilter> filter) override { group_filter_ = std::move(filter); }
  void set_top_groups(TopGroups top) override { top_groups_ = std::move(top); }
  uint64_t groups_filtered_out() const override { return filtered_out_ + top_dropped_; }
  size_t finalize(std::vector<Vector>& columns) override;
  std::vector<std::string> explain() const override;
  // False where an aggregate the mapping takes cannot run after all (min or
  // max of text over rows that are not a stored table's chunks): the
  // generic path answers instead.
  bool usable() const { return usable_; }

 private:
  static double since_us(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
  }
  void choose_engine(const ExecContext& context);
  // choose_engine: whether a small table's first read goes to the CPU
  // engine rather than `gpu` (kColdReadCpuRows).
  bool cold_read_on_cpu(AggregateEngine& gpu) const;
  // WHERE and the inputs that are expressions as column programs the engine
  // evaluates over the stored chunks (column_program_compiler.hpp), when
  // all of them compile and the raw path can take the query; else nothing
  // changes and the host evaluates them.
  void compile_programs(const Expr* where, RowFeed feed, const ExecContext& context);
  // The dictionary and order of the stored text column a min or max of
  // text reads (Mapping::text_rank); nothing for a dictionary too large to sort.
  struct TextRanks;
  std::optional<TextRanks> text_ranks_of(const Expr* input, const ExecContext& context) const;
  // The engine's run for `spec` (ordered-set aggregates beside a GPU run).
  std::unique_ptr<AggregationRun> start_run(const AggregationSpec& spec);
  // ---- packed keys (engine_aggregator_keys.cpp) ----
  // Several bare integer-like or text key columns of a stored table: packed
  // when their ranges (chunk statistics) fit 63 bits, else a key tuple;
  // fills spec_.key_parts, the key range and the estimate. Else interned.
  KeyMode plan_key_columns(const TableSnapshot* table);
  // Keys that are not bare columns of a stored table, as a key tuple of
  // their evaluated values when every key's type allows (evaluated_tuple),
  // else interned.
  KeyMode plan_evaluated_tuple();
  // group_filter_ as tests of the partial states: of a count, or of an
  // integer or numeric sum, min or max (at its input's scale, once known),
  // compared with a constant. None over ordered-set values.
  std::vector<GroupTest> group_tests() const;
  // Drops from `result` the groups a test of group_tests() rejects, before
  // any column is built; returns the groups left.
  size_t filter_groups(AggregationResult& result, size_t groups);
  // Cuts `result` and, where `keys_built`, its key columns (the last
  // keys_.size() of `columns`) to the groups that can be among
  // top_groups_'s first rows, where every sort key is a key column (only
  // with the keys built), a count, or an exact sum, min or max of integers
  // or numerics; returns the groups left.
  size_t keep_top_groups(AggregationResult& result, size_t groups, std::vector<Vector>& columns, bool keys_built);
  // Whether every sort key of top_groups_ is an aggregate (none a key).
  bool top_groups_by_aggregates() const;
  // Table column of each key column (packed and tuple modes).
  const std::vector<int>& packed_columns() const { return packed_columns_; }
  // A key tuple's group values (AggregationResult::key_codes, key_codes32)
  // into key columns. Integer key columns take the engine's arrays (result's
  // key_codes), text ones its 32-bit codes where it returned them so.
  void tuple_keys(AggregationResult& result, size_t groups, std::vector<Vector>& columns) const;
  // The dictionaries of the text key columns, read from the table when no
  // raw chunk brought them (the evaluated path looks strings up in them).
  // Const and once for the evaluated path (prepare() runs on several
  // threads): the dictionaries are the table's, whichever thread asks first.
  void load_dictionaries() const;
  // Evaluated keys (prepare()) as key columns for the engine to pack.
  void evaluated_key_columns(const EvalInput& rows, ChunkInput& in, std::vector<std::vector<int64_t>>& values,
                             std::vector<std::vector<uint8_t>>& validity) const;
  // Where key_columns' fill writes one key column: ints (integer-like),
  // codes (coded text) or neither (text without entries: all NULL); nulls
  // (1 = NULL) only where the column may hold NULLs. A NULL group's value is 0.
  struct KeyColumnOut {
    int64_t* ints = nullptr;
    int32_t* codes = nullptr;
    Numeric* numerics = nullptr;  // a numeric key: values at numeric_scales_
    uint8_t* nulls = nullptr;
  };
  // Appends every key column of groups [0, groups): fill_block(k, begin, end,
  // out) writes key k's values (stored codes; text: dictionary codes) of
  // groups [begin, end), from several threads at once. An integer column k
  // with take[k] set starts from that array, a coded text column with
  // take_codes[k] set from that one (moved; fill may leave it).
  template <class FillBlock>
  void key_columns(size_t groups, const std::vector<uint8_t>& may_be_null, std::vector<Vector>& columns,
                   FillBlock&& fill_block, const std::vector<std::vector<int64_t>*>& take = {},
                   const std::vector<std::vector<int32_t>*>& take_codes = {}) const;
  // Packed codes back into key columns (finalize).
  void unpack_keys(const AggregationResult& result, size_t groups, std::vector<Vector>& columns) const;
  void decode_dictionary_keys(const AggregationResult& result, size_t groups, Vector& v) const;
  // Group-count estimate of a packed key from a sample of its codes.
  void estimate_packed_from_sample(const TableSnapshot& table);
  // Every `stride`-th row of each chunk of `columns`: its hash_at(batch, row)
  // and its previous row's (~ its own for a chunk's first row), in chunk
  // order. The chunks are read over the worker pool: a key column that is
  // not in memory yet is read whole to be sampled, which one thread did at
  // a fraction of the disk's speed (most of a question's first run).
  template <class HashAt>
  void sample_hashes(const TableSnapshot& table, const std::vector<int>& columns, uint64_t stride, HashAt&& hash_at,
                     std::vector<uint64_t>& hashes, std::vector<uint64_t>& previous) const {
    const size_t chunks = table.chunk_count();
    std::vector<std::vector<uint64_t>> part_hashes(chunks), part_previous(chunks);
    const int threads = spec_.threads > 0 ? spec_.threads : cpu::WorkerPool::shared().workers() + 1;
    cpu::parallel_tasks(threads, chunks, [&](int, size_t c) {
      const auto batch = table.read_chunk(c, columns);
      for (size_t r = 0; r < batch->rows; r += stride) {
        part_hashes[c].push_back(hash_at(*batch, r));
        part_previous[c].push_back(r > 0 ? hash_at(*batch, r - 1) : ~part_hashes[c].back());
      }
    });
    for (size_t c = 0; c < chunks; ++c) {
      hashes.insert(hashes.end(), part_hashes[c].begin(), part_hashes[c].end());
      previous.insert(previous.end(), part_previous[c].begin(), part_previous[c].end());
    }
  }
  // Takes the estimate kept for `columns` over this snapshot (estimate_cache.hpp); false when none.
  bool take_kept_estimate(const TableSnapshot& table, const std::vector<int>& columns);
  // The estimator over sampled key hashes (and the key column's sketches, for
  // one column); the estimate is kept for `columns` over this snapshot.
  void estimate_from_hashes(const TableSnapshot& table, std::vector<uint64_t> hashes, std::vector<uint64_t> previous,
                            bool use_sketches, const std::vector<int>& columns);
  // Group-count estimate from a sample of key values spread over every chunk
  // (executor/estimate/), used to size the engine's tables and shown by EXPLAIN.
  void estimate_from_sample(const TableSnapshot& table);
  // For a count, or a sum/avg of int2/int4 with 128-bit sums in `s`: whether
  // the sums all fit in int64; they then go to s.sum_int64 (the compact
  // form's; sum_int is emptied). Else (another aggregate, or a sum out of
  // the int64 range, which finalize_column reports as 22003) false, `s` unchanged.
  // `rows` bounds the rows aggregated (the table's).
  static bool narrow_int_sums(const AggregateCall& call, PartialStates& s, size_t groups, uint64_t rows);

  const std::vector<ExprPtr>& keys_;
  const std::vector<AggregateCall>& aggregates_;
  std::vector<Mapping> mappings_;
  KeyMode mode_ = KeyMode::interned;
  int key_column_ = -1;
  std::vector<const Expr*> inputs_;
  // Per input of min or max of text (Mapping::text_rank): the column's
  // dictionary and its order, whose ranks the input is; null for others.
  // The raw path's value programs look the ranks up; evaluated rows
  // (prepare()) are ranked on the host from their codes.
  struct TextRanks {
    std::shared_ptr<const storage::StringDictionary> dictionary;
    std::shared_ptr<const DictionaryOrder> order;
  };
  std::vector<TextRanks> text_ranks_;
  bool usable_ = true;
  std::vector<Value> fractions_;  // per aggregate: the ordered-set direct argument (NULL: none)
  AggregationSpec spec_;
  const EngineTableSnapshot* engine_table_ = nullptr;  // null: a table without engine extras
  uint64_t table_oid_ = 0;
  uint64_t table_rows_ = UINT64_MAX;  // bounds the rows any group sums (narrow_int_sums)
  std::unique_ptr<AggregateEngine> cpu_engine_;
  AggregateEngine* engine_ = nullptr;  // cpu_engine_, or the database's GPU engine
  bool on_gpu_ = false;
  bool device_collector_ = false;  // start_run gave the ordered aggregates a device collector
  // Whether the run start_run made evaluates the spec's programs for its
  // ordered aggregates too (or has none); otherwise the host path evaluates them.
  bool ordered_rows_take_programs() const;
  std::string not_on_gpu_;  // why a GPU engine that was there did not run it
  std::unique_ptr<AggregationRun> run_;
  AggregationReport report_;
  KeyInterner interner_;
  std::vector<int> packed_columns_;  // packed mode: table column of each key part
  mutable std::vector<std::shared_ptr<const storage::StringDictionary>> part_dictionaries_;  // text parts
  mutable std::once_flag dictionaries_loaded_;  // the evaluated path's load_dictionaries()
  // evaluated_tuple: per key, the codes of a text key (null for others) and
  // the scale of a numeric key's values: the expression's static scale, or
  // else the first value's (kScaleUnknown until a value is seen); a value of
  // another scale sends the query to the generic path.
  static constexpr int32_t kScaleUnknown = INT32_MIN + 1;
  std::vector<std::unique_ptr<TextKeyCodes>> text_codes_;
  mutable std::vector<std::atomic<int32_t>> numeric_scales_;
  // Per input, the same for a numeric aggregate input: its static scale, or
  // for a column of a derived table (numeric without a declared scale)
  // the first value's, every value checked against it (`input_scale_checked_`).
  mutable std::vector<std::atomic<int32_t>> input_scales_;
  std::vector<uint8_t> input_scale_checked_;
  // The scale every non-NULL value of `v` has, decided by the first value
  // any thread sees when `decided` is kScaleUnknown; a value of another
  // scale throws EngineInputOverflow (`what` names the varying value).
  // A stored chunk as the engine takes it (sink_raw): views into the batch
  // and into the arrays made for it.
  struct RawChunk;
  void raw_input(size_t chunk, size_t rows, const storage::ChunkBatch* batch, const std::vector<int>& batch_columns,
                 RawChunk& raw) const;
  // The text keys' dictionaries, from the chunks as they come (consumer only).
  void keep_dictionaries(const storage::ChunkBatch* batch, const std::vector<int>& batch_columns);
  void run_sink(const ChunkInput& in);
  static int32_t one_numeric_scale(const Vector& v, std::atomic<int32_t>& decided, const char* what);
  const TableSnapshot* table_ = nullptr;
  bool interned_ = false;
  // dict_column mode on evaluated rows: keys given as dictionary_'s codes
  // (sink_prepared), after which no chunk's keys are interned.
  bool coded_keys_ = false;
  std::string estimate_source_ = "statistics";
  double statistics_us_ = 0, estimate_us_ = 0, start_us_ = 0, columns_us_ = 0;  // EXPLAIN ANALYZE
  // Of columns_us_: the key columns, then each aggregate's column (EXPLAIN ANALYZE).
  std::vector<double> column_parts_us_;
  long column_faults_ = 0;  // minor page faults of the process while they were built
  std::vector<GroupFilter> group_filter_;  // set_group_filter
  uint64_t filtered_out_ = 0;              // groups filter_groups dropped
  double filter_us_ = 0;
  TopGroups top_groups_;                   // set_top_groups
  uint64_t top_dropped_ = 0;               // groups keep_top_groups dropped
  double top_us_ = 0;
  std::shared_ptr<const storage::StringDictionary> dictionary_;
  std::vector<uint8_t> deferrable_;  // allow_deferred_avg: by finalize column
  // Stored chunk columns the scan asked for, and those the run held so that
  // the host did not read them (raw_columns), for EXPLAIN ANALYZE.
  uint64_t scanned_columns_ = 0, held_columns_ = 0;
  // compile_programs: the table columns ChunkInput::program_columns carry,
  // whether the engine applies WHERE, and its conditions (EXPLAIN).
  std::vector<int> program_columns_;
  std::vector<std::shared_ptr<const void>> program_arrays_;  // ProgramColumnMap::arrays
  bool takes_where_ = false;
  size_t where_conditions_ = 0, input_programs_ = 0;
};

}  // namespace tally::executor::engine_aggregation
