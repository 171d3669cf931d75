#pragma once
// The seam between the planner and the aggregation engines (the CPU hash
// engine in executor/cpu/, the GPU engine in gpu/). The planner hands an engine
// fixed-width data only — what GPU kernels need:
//  * one key per row: an int32 or int64 vector (single integer column; text as
//    its dictionary code; else a query-local code), with a validity mask (NULL
//    key group); or, for several integer-like or dictionary-coded columns
//    whose ranges fit 63 bits together, the key columns themselves and their
//    packing (AggregationSpec::key_parts): the engine packs each row into one
//    int64 code where the data is (inside its own loop, or on the device over
//    resident columns), so no per-row host work precedes it. Bare key columns
//    whose ranges do not fit 63 bits (or have no chunk statistics) arrive the
//    same way as a key tuple (AggregationSpec::key_tuple): the engine hashes
//    each row's tuple of column codes with equality on each column, gives
//    each distinct tuple a query-local id, aggregates over the ids and
//    returns each group's column codes. Only keys that are expressions (or
//    of types without an integer code) arrive as query-local codes interned
//    by the planner row by row on the host.
//  * value columns as native arrays (int32/int64/float32/float64) with validity;
//  * per aggregate: one partial-state operation, its input column(s) and an
//    optional FILTER mask;
//  * the estimated group count and the key range when known (dense variants);
//  * optionally a WHERE clause and expression inputs as column programs
//    (common/column_program.hpp) over the stored columns, which the engine
//    evaluates before aggregating (rows WHERE drops make no group).
// Engines consume the input chunk by chunk (sink) and may change variant or
// configuration between chunks; finalize returns PARTIAL STATES (count, sum,
// min, max, moments) that executor/finalize.hpp turns into PostgreSQL's values,
// so every engine gives the same answer. Engines never see SQL.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/column_program.hpp"
#include "common/column_width.hpp"
#include "common/group_test.hpp"
#include "common/ordered_pick.hpp"
#include "common/scan_selection.hpp"
#include "common/tuning_store.hpp"

namespace tally {

class CancelToken;  // common/cancel.hpp

// Partial-state operations. Each aggregate of the query maps to one.
enum class PartialOp : uint8_t {
  count_rows,      // count(*): rows (after FILTER)
  count_valid,     // count(x): non-NULL inputs
  sum_int,         // int128 sum + count of an integer input (sum/avg of int2/4/8, numeric(p<=18) scaled)
  sum_float,       // double sum + count (sum(float4/float8))
  min_int, max_int,          // over integer-like inputs (also bool_and/bool_or on 0/1, dates)
  min_float, max_float,      // PostgreSQL float order: NaN greatest
  moments_int,     // exact count, sum, sum of squares (int128) of int2/int4: var/stddev
  moments_float,   // Youngs-Cramer n, Sx, Sxx (float8_accum): avg/var/stddev of floats
  moments2_float,  // Youngs-Cramer of (Y, X) pairs (float8_regr_accum): corr, covar, regr_*
  // The group's non-NULL inputs (after FILTER), sorted in PostgreSQL's order
  // (NaN greatest, NaNs one value; -0 just below 0, though PostgreSQL takes them as equal):
  // ordered-set aggregates (percentile_cont/disc, mode) pick from them at
  // finalize. PartialStates::offsets + ordered_int (integer-like inputs) or
  // ordered_float (float inputs).
  ordered_values,
  // count(DISTINCT x): the number of distinct non-NULL inputs (PostgreSQL's
  // equality: NaNs one value, -0 = 0) in PartialStates::count. An engine
  // finds it the way it finds ordered_values, and returns only the count.
  count_distinct,
};

// Names the stored bytes of one column of one chunk for the life of the
// process, so that an engine may keep a copy (the GPU's device column cache)
// keyed by it: storage chunk ids are never reused within a table, table oids
// are never reused, and committed chunk files never change. Unknown (table 0)
// for columns the planner computed: those bytes are transient.
struct ColumnIdentity {
  uint64_t table = 0;   // table oid; 0 = unknown
  uint64_t chunk = 0;   // storage chunk id
  uint32_t column = 0;  // table column number
  bool known() const { return table != 0; }
};

// A column of one chunk, not owned (points into storage's decoded chunk or a
// vector the planner computed). A stored column the run holds
// (AggregationRun::hold) comes with data and validity null and its identity
// set: the engine reads its own copy, and the host never read the column.
struct ColumnView {
  ColumnWidth width = ColumnWidth::int64;
  const void* data = nullptr;
  const uint8_t* validity = nullptr;  // 1 = valid; nullptr = no NULLs
  ColumnIdentity identity;            // filled by the raw-chunk path for stored columns
};

// One column of a packed key. Its field in the row's int64 code is
// (value - min) in `bits` bits from bit `offset`; a nullable column's NULL
// is the field of all ones (`bits` leaves room for it above max - min), so
// that a column's NULLs form one group, as PostgreSQL groups them, and sort
// after its values. Every field ends below bit 63: codes are non-negative
// and never the NULL key.
struct KeyPart {
  int64_t min = 0;
  uint32_t offset = 0;
  uint32_t bits = 0;      // max - min < 2^bits - (nullable ? 1 : 0)
  bool nullable = false;  // NULL is the field mask()
  // Key tuples only: the engine may return this column's group values in 32
  // bits (AggregationResult::key_codes32), as a text key's dictionary codes
  // are kept; at 1e8 groups that is 400 MB less to copy back and to narrow.
  bool narrow = false;
  uint64_t mask() const { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }
};

// Bits a field needs for values in [min, max], and a NULL beside them where
// `nullable` (0 for one value and no NULL, or none at all; past 63 where
// no packing takes them).
inline uint32_t key_part_bits(int64_t min, int64_t max, bool nullable) {
  if (max < min) return 0;
  uint64_t top = static_cast<uint64_t>(max) - static_cast<uint64_t>(min);  // the largest field
  if (nullable) {
    if (top == ~uint64_t{0}) return 65;
    ++top;
  }
  uint32_t bits = 0;
  while (bits < 64 && (top >> bits) != 0) ++bits;
  return bits;
}

struct PartialAggregate {
  PartialOp op = PartialOp::count_rows;
  int input = -1;   // index into ChunkInput::values (-1 for count_rows)
  int input2 = -1;  // second input (moments2_float: X; `input` is Y)
};

// What stays fixed for one query's aggregation.
struct AggregationSpec {
  ColumnWidth key_width = ColumnWidth::int64;  // int32 or int64
  bool key_range_known = false;                // min/max over the whole input (from chunk stats)
  int64_t key_min = 0, key_max = 0;
  uint64_t estimated_groups = 0;               // 0 = unknown
  std::vector<PartialAggregate> aggregates;
  // Empty, or one per aggregate: what an ordered_values aggregate reads of
  // its group's sorted values, where the statement fixes it (a percentile's
  // constant fraction, a top-n's rank): an engine may keep and copy back
  // only those values. nullopt = every value.
  std::vector<std::optional<OrderedPick>> ordered_picks;
  std::vector<ColumnWidth> value_widths;       // one per ChunkInput::values entry
  // Per ChunkInput::values entry: 1 when no chunk of the input holds a NULL
  // (catalog statistics), so an engine may share count(v) with count(*);
  // empty or 0 = may hold NULLs.
  std::vector<uint8_t> value_not_null;
  // Whether the key's NULLs are known from catalog statistics: nullopt =
  // unknown, true = some chunk holds a NULL key, false = none does (the GPU
  // engine's rules then know which kernel a chunk runs: gpu/group_by_spec.hpp).
  std::optional<bool> key_has_nulls;
  // No GROUP BY: every row's key is 0 (ChunkInput::keys holds zeros), so an
  // engine may make its key column itself rather than read or copy one.
  bool global_aggregate = false;
  // Non-empty: the key is packed from ChunkInput::key_columns (one per part)
  // into int64 codes by the engine (see KeyPart); key_width is then int64,
  // the key range is [0, key_max] and no code is the NULL key.
  std::vector<KeyPart> key_parts;
  // With key_parts: the columns are a key tuple rather than packed (their
  // ranges need more than 63 bits). Each part's nullable says whether its
  // column may hold NULLs (min, bits and offset are unused); a NULL is a
  // value of its own in its column, as PostgreSQL groups it. The engine
  // groups rows by the tuple of column values (int64 codes, equality on each
  // column), aggregates over query-local tuple ids and returns each group's
  // column values in AggregationResult::key_codes. key_width is int64, the
  // key range unknown, and no id is the NULL key.
  bool key_tuple = false;
  int threads = 0;                             // 0 = hardware concurrency
  uint64_t memory_budget = 0;                  // bytes for group state; 0 = unbounded
  // The rows the run will be given at most, where the caller knows them (the
  // table it reads whole, with no WHERE); 0 = unknown. An engine may size
  // arrays that grow with the rows once for all of them.
  uint64_t input_rows = 0;
  std::string forced_variant;                  // "" = engine's choice (tests, benchmarks)
  // Launch configuration to force (GPU: the tuner's text form
  // "tpb=256,bps=4,ff=50,rpt=4", SET tally.launch_config); "" = engine's choice.
  std::string forced_configuration;
  // SET jit: the GPU engine may compile the WHERE, input and key programs
  // into a kernel of their own (off: its interpreting kernel runs them).
  bool compile_programs = true;
  // The tuning cache (not owned; outlives the run); nullptr = no persisted
  // tuning: the engine starts from its rules and forgets what it measured.
  TuningStore* tuning_store = nullptr;
  // Operator signature for the tuning cache key; "" = the engine derives one
  // from the widths and aggregates above (gpu::tuning_signature).
  std::string operator_signature;
  // The caller reads the compact result form (PartialStates::sum_int64,
  // AggregationResult::count_source): an engine may then keep int64 sums
  // and give aggregates that count the same rows one count array. Engines
  // that ignore it return the full form, which is always valid.
  bool compact_result = false;
  // The statement's cancel token (not owned; outlives the run; nullptr =
  // none): an engine looks at it between chunks and between the steps it
  // waits on the device for, so that cancel and statement_timeout stop a
  // query whose chunks never leave the engine.
  const CancelToken* cancel = nullptr;
  // Non-empty: a WHERE clause the engine evaluates over
  // ChunkInput::program_columns before aggregating; rows it does not pass
  // (false or NULL) are not aggregated and make no group.
  ColumnProgram row_filter;
  // Empty, or one per ChunkInput::values entry: a non-empty program computes
  // that input from ChunkInput::program_columns (the entry of values then
  // comes without data), as int64 (integers, numerics scaled to its scale)
  // or float64, with NULLs as validity.
  std::vector<ColumnProgram> value_programs;
  // Empty, or one per key part of a key tuple (key_tuple): each computes its
  // part's column from ChunkInput::program_columns as int64 (the entries of
  // key_columns then come without data), with NULLs as validity: keys that
  // are expressions, or a joined relation's values (ProgramOp::lookup).
  std::vector<ColumnProgram> key_programs;
  // The lookup columns the programs read (ProgramOp::lookup: a joined
  // relation's values by key), in host memory the caller keeps for the run.
  // Their program column indexes follow the chunk's: lookup_columns[i] is
  // program column ChunkInput::program_columns.size() + i.
  std::vector<LookupColumn> lookup_columns;
};

// One chunk of input rows.
struct ChunkInput {
  size_t rows = 0;
  ColumnView keys;                             // int32/int64 keys (unused with key_parts)
  // With AggregationSpec::key_parts: one int32 or int64 view per part (text
  // as dictionary codes); stored columns keep their ColumnIdentity.
  std::vector<ColumnView> key_columns;
  std::vector<ColumnView> values;
  std::vector<const uint8_t*> filters;         // one per aggregate; nullptr = no FILTER
  // The stored columns the spec's programs read (ProgramOp::load's column
  // index), with identity like any stored column (resident on the GPU).
  std::vector<ColumnView> program_columns;
  // Set by AggregationRun::prepare once it evaluated the spec's programs:
  // the views are the rows the WHERE kept, the inputs computed.
  bool programs_evaluated = false;
};

// Packs rows [begin, end) of chunk.key_columns into out[0, end - begin)
// (the host engines' loop; the GPU engine packs on the device the same way).
// Column by column, so that each pass is one tight loop over one array.
inline void pack_key_rows(const std::vector<KeyPart>& parts, const ChunkInput& chunk, size_t begin, size_t end,
                          int64_t* out) {
  const size_t n = end - begin;
  for (size_t r = 0; r < n; ++r) out[r] = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    const KeyPart& part = parts[p];
    const ColumnView& col = chunk.key_columns[p];
    const uint64_t min = static_cast<uint64_t>(part.min);
    const uint32_t shift = part.offset;
    // Masked: a NULL row's stored value is arbitrary and must not reach
    // another column's field.
    const uint64_t mask = part.mask();
    auto add = [&](const auto* values) {
      for (size_t r = 0; r < n; ++r) {
        const uint64_t field = (static_cast<uint64_t>(static_cast<int64_t>(values[begin + r])) - min) & mask;
        out[r] = static_cast<int64_t>(static_cast<uint64_t>(out[r]) | (field << shift));
      }
    };
    if (col.width == ColumnWidth::int32) add(static_cast<const int32_t*>(col.data));
    else add(static_cast<const int64_t*>(col.data));
    if (col.validity != nullptr && part.nullable) {
      // A NULL row's field is all ones.
      const uint64_t field = mask << shift;
      const uint8_t* valid = col.validity + begin;
      for (size_t r = 0; r < n; ++r) {
        if (!valid[r]) out[r] = static_cast<int64_t>(static_cast<uint64_t>(out[r]) | field);
      }
    }
  }
}

// Partial states per group, struct-of-arrays, one entry per PartialAggregate.
struct PartialStates {
  std::vector<int64_t> count;       // count_rows, count_valid, and the n of sum_int/sum_float/moments_int
  std::vector<__int128> sum_int;    // sum_int, moments_int (sum)
  std::vector<__int128> sum2_int;   // moments_int (sum of squares)
  std::vector<double> sum_float;    // sum_float
  std::vector<int64_t> extreme_int; // min_int/max_int (valid when count > 0)
  std::vector<double> extreme_float;
  std::vector<double> n, sx, sxx, sy, syy, sxy;  // moments_float / moments2_float
  // Only with AggregationSpec::compact_result: the sums of sum_int as int64
  // when the engine kept them so (sum_int is then empty).
  std::vector<int64_t> sum_int64;
  // ordered_values: group g's values are [offsets[g], offsets[g + 1]) of
  // ordered_int or ordered_float (groups + 1 entries; empty = no values).
  std::vector<uint64_t> offsets;
  std::vector<int64_t> ordered_int;
  std::vector<double> ordered_float;
  // Non-empty: the picked form of ordered_values (common/ordered_pick.hpp's
  // OrderedPick; percentiles only): [offsets[g], offsets[g + 1]) hold only
  // the values the group's percentiles read, value i being the one at
  // ascending position ordered_pos[i] among the group's count[g] values.
  std::vector<uint64_t> ordered_pos;
  // The picked form with one value per group (ordered_nth, percentile_disc):
  // ordered_int / ordered_float[g] is group g's value, count[g] its number
  // of values (fewer than the position read: NULL); offsets and ordered_pos
  // stay empty.
  bool one_pick = false;
};

struct AggregationResult {
  std::vector<int64_t> keys;        // one per group
  std::vector<uint8_t> key_valid;   // 0 = the NULL-key group
  // Only with AggregationSpec::key_tuple (keys then hold the engine's tuple
  // ids): per key column, each group's value (widened to int64) and
  // validity (0 = NULL), one entry per group; an empty validity: no group's
  // value is NULL (the GPU copies none back then: at 1e8 groups, 100 MB a column).
  std::vector<std::vector<int64_t>> key_codes;
  // Per key column, empty or (for a KeyPart::narrow column, where the engine
  // chose so) its group values in 32 bits; key_codes[k] is empty then.
  std::vector<std::vector<int32_t>> key_codes32;
  std::vector<std::vector<uint8_t>> key_code_valid;
  std::vector<PartialStates> states;  // one per PartialAggregate
  // Only with AggregationSpec::compact_result; empty = every aggregate has
  // its own count. Else per aggregate: the aggregate whose states.count holds
  // this one's count (itself, or an earlier one counting the same rows, whose
  // count array this one's then lacks).
  std::vector<int> count_source;
  // Groups the run's group tests (keep_groups_where) dropped before it
  // built their arrays: not among the groups above.
  uint64_t groups_dropped = 0;
  size_t groups() const { return keys.size(); }
};

// What ran, for EXPLAIN ANALYZE.
struct AggregationReport {
  std::string engine;         // "cpu", "gpu"
  std::string variant;        // "dense", "hash-partitioned", ...
  std::string configuration;  // "threads=2 partitions=64", "blocks=..., threads/block=..."
  uint64_t rows = 0;
  uint64_t groups = 0;
  uint64_t passes = 1;
  double sink_ms = 0, finalize_ms = 0;
  // Time the device spent aggregating (GPU: CUDA events around each chunk's
  // launches, excluding host-to-device copies); 0 when not measured.
  double device_ms = 0;
  uint64_t chunks = 0;
  // Further EXPLAIN ANALYZE lines from the engine (column cache, tuner).
  std::vector<std::string> details;
};

class AggregationRun {
 public:
  virtual ~AggregationRun() = default;
  // Number of passes over the input the engine needs (memory-bounded
  // partitioning): the planner feeds every chunk once per pass, calling
  // begin_pass(p) first, and calls finalize() after the last pass.
  virtual int passes() const { return 1; }
  virtual void begin_pass(int /*pass*/) {}
  // Whether the engine keeps a copy of this stored column of one chunk (the
  // GPU's device column cache), at the width the caller would pass it, and
  // will keep it until the run ends: the caller then skips reading it and
  // passes it without data (ColumnView). Asked before the chunk is read, in
  // chunk order, on the thread that sinks.
  virtual bool hold(const ColumnIdentity& /*column*/, ColumnWidth /*width*/) { return false; }
  // Work on a chunk that reads no state of the run (evaluating the spec's
  // WHERE and input programs), done ahead of sink() on the thread that read
  // the chunk, several chunks at once: rewrites `chunk` to what sink() then
  // takes as it is, and returns the memory its views now point into (kept
  // until that sink()). Thread-safe. nullptr: nothing done ahead.
  virtual std::shared_ptr<void> prepare(ChunkInput& /*chunk*/) const { return nullptr; }
  virtual void sink(const ChunkInput& chunk) = 0;
  // Before finalize(): the run may leave out of its result the groups one
  // of `tests` rejects (group_test.hpp), so that it builds no array for
  // them. An engine's partial run (one device of several) must not: a
  // group's partial value is not its value.
  virtual void keep_groups_where(std::vector<GroupTest> /*tests*/) {}
  virtual AggregationResult finalize() = 0;
  virtual AggregationReport report() const = 0;
};

// One stored chunk's columns for AggregateEngine::keep: columns[i] of table
// `table` at width widths[i] (as the engine reads it: int2 and bool widened
// to int32, a text column's dictionary codes), its values at host[i].
struct KeptChunk {
  uint64_t table = 0;  // table oid (ColumnIdentity::table)
  uint64_t chunk = 0;  // storage chunk id
  size_t rows = 0;
  std::vector<uint32_t> columns;
  std::vector<ColumnWidth> widths;
  std::vector<SelectionPiece::HostColumn> host;
};

class AggregateEngine {
 public:
  virtual ~AggregateEngine() = default;
  virtual std::string name() const = 0;
  // Side-effect-free: whether this engine can run the spec at all.
  virtual bool can_run(const AggregationSpec& spec) const = 0;
  virtual std::unique_ptr<AggregationRun> start(const AggregationSpec& spec) = 0;
  // Whether the engine keeps a copy of this stored column of one chunk (the
  // GPU's device column cache), so that a run over it reads no host memory.
  // Counts no cache hit or miss.
  virtual bool keeps(const ColumnIdentity& /*column*/) const { return true; }
  // Notes that a read of `table`, none of whose columns the engine kept, was
  // left to another engine; true when one had been left before. The caller
  // then runs this read here: a table read twice is worth copying.
  virtual bool note_left_elsewhere(uint64_t /*table*/) { return true; }
  // A scan's row selection over the engine's copies of its columns
  // (common/scan_selection.hpp); null where the engine runs none.
  virtual std::unique_ptr<ScanSelectionRun> start_selection(const ScanSelectionSpec& /*spec*/) { return nullptr; }
  // Copies a stored chunk's columns into what the engine keeps (the GPU's
  // device column cache), where there is room and they are not kept yet:
  // pg_prewarm, so that the first query over them reads no host memory.
  // Returns the bytes copied. Thread-safe.
  virtual uint64_t keep(const KeptChunk& /*chunk*/) { return 0; }
};

}  // namespace tally
