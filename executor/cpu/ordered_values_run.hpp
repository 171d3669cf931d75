#pragma once
// Ordered-set aggregates (PartialOp::ordered_values) and count(DISTINCT)
// (PartialOp::count_distinct) on the CPU engine. They need every value of a
// group, not a running state, so they stay out of the variants' state sets:
// this run wraps the run of the other aggregates (any variant), keeps each
// ordered aggregate's (group key, order code) rows while the chunks pass,
// and at finalize gives every row its result group (a hash lookup of its key
// among the inner run's groups), partitions the rows by group with a
// parallel counting sort, and sorts each group's values in parallel. A group
// thus costs a sort of its own values only (q6: 10,000 sorts of 1,000 values
// rather than one sort of 10 million).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/aggregate_engine.hpp"
#include "common/memory_tracker.hpp"
#include "common/ordered_rows.hpp"

namespace tally::executor::cpu {

class GroupIndex;  // group_index.hpp

bool is_ordered_op(PartialOp op);
// Whether the spec holds an aggregate that OrderedValuesRun must take.
bool has_ordered_aggregates(const AggregationSpec& spec);

class OrderedValuesRun final : public AggregationRun {
 public:
  using InnerFactory = std::function<std::unique_ptr<AggregationRun>(const AggregationSpec&)>;
  // Sorts codes[offsets[g], offsets[g + 1]) for every group in place; false
  // when it cannot (the run then sorts on the host).
  using SegmentSorter = std::function<bool(uint64_t* codes, size_t n, const uint64_t* offsets, size_t groups)>;
  // The spec without its ordered aggregates and the value inputs only they
  // read (a count_rows stands in when no aggregate is left, so the groups
  // still come from the inner run). values: the spec's value index of each
  // of the inner spec's.
  static AggregationSpec inner_spec(const AggregationSpec& spec, std::vector<int>* values = nullptr);
  // make_inner starts the run of inner_spec(spec). sorter: where the
  // groups' values are sorted (the GPU's segmented sort); empty = the host,
  // `sorter_name` names it in EXPLAIN ANALYZE. collector: where the ordered
  // aggregates' rows are kept and sorted instead (the GPU over its resident
  // columns, common/ordered_rows.hpp); nullptr = here, on the host, where
  // slots read only a top-n's ranks get the host's top-codes tables
  // (top_codes_rows.hpp).
  // The spec's ordered_picks: the positions each aggregate's finalizer
  // reads (percentiles, a top-n's ranks); nullopt or absent = every value
  // (mode, count(DISTINCT)). Rows of which every reader has picks come back
  // from the collector picked.
  OrderedValuesRun(const AggregationSpec& spec, const InnerFactory& make_inner, SegmentSorter sorter = {},
                   std::string sorter_name = {}, std::unique_ptr<OrderedRowsCollector> collector = nullptr);

  int passes() const override;
  void begin_pass(int pass) override;
  // With a collector: a column both it and the inner run keep.
  bool hold(const ColumnIdentity& column, ColumnWidth width) override;
  void sink(const ChunkInput& chunk) override;
  AggregationResult finalize() override;
  AggregationReport report() const override;

 private:
  // One ordered aggregate's rows, in arrival order.
  struct Collected {
    std::vector<int64_t> keys;             // rows with a non-NULL key
    std::vector<uint64_t> codes;           // their order codes (common/ordered_code.hpp)
    std::vector<uint64_t> null_key_codes;  // rows of the NULL-key group
    MemoryReservation memory;              // the arrays, against the statement's budget
    uint64_t seen_rows = 0;                // input rows given so far
  };
  // One collector's rows partitioned by result group, each group sorted.
  struct Sorted {
    std::vector<uint64_t> offsets;  // groups + 1
    OrderCodes codes;
    // Where group g's codes start in `codes` when not at offsets[g] (the
    // device's segments come in key order); empty = at offsets[g].
    std::vector<uint64_t> from;
    // The picked form (PartialStates::ordered_pos): each group's number of
    // values, and each kept code's position among them; empty = every value.
    std::vector<uint64_t> n;
    std::vector<uint64_t> positions;
    uint64_t per = 0;  // picked: the codes each group with values keeps
  };
  // Chunks, and groups, below this many rows are handled by one thread.
  static constexpr size_t kParallelRows = size_t{1} << 15;
  static const uint8_t* filter_of(const ChunkInput& chunk, size_t a) {
    return a < chunk.filters.size() ? chunk.filters[a] : nullptr;
  }
  void collect(const ChunkInput& chunk, const int64_t* packed, size_t a);
  // Room in c's arrays for `rows` kept rows (c.seen_rows given so far).
  void grow(Collected& c, size_t rows) const;
  static void reserve_collected(Collected& c, size_t rows);
  // Whether every aggregate beside the ordered ones is count(*) or count(x).
  bool counts_only() const;
  // Whether the chunk's counts are the collector's: each count(x) counts
  // the one slot's input itself, and no FILTER parts them.
  bool counts_are_the_collectors(const ChunkInput& chunk) const;
  // Whether a FILTER parts any aggregate's rows of the chunk.
  bool any_filter(const ChunkInput& chunk) const;
  // finalize() where the groups are the collector's keys.
  AggregationResult finalize_keyed();
  // Aggregate a's kept rows (moved out) sorted within out's groups.
  Sorted sort_rows(size_t a, const GroupIndex& index, size_t groups);
  // The picked form of rows partitioned by group (codes[offsets[g],
  // offsets[g + 1]) are group g's, in any order; reordered in place).
  Sorted select_picks(const std::vector<OrderedPick>& picks, std::vector<uint64_t> offsets, OrderCodes& codes) const;
  // A collector slot's sorted rows, placed in out's groups.
  Sorted place_segments(KeyedSegments k, const GroupIndex& index, size_t groups);
  // The same for its picked rows (only the values the slot's percentiles read).
  Sorted place_picks(KeyedPicks k, const GroupIndex& index, size_t groups);
  // The picks of every aggregate reading ordered aggregate a's rows; nullopt
  // when one of them reads every value.
  std::optional<std::vector<OrderedPick>> slot_picks(size_t a) const;
  // Whether every aggregate reading ordered aggregate a's rows is
  // count(DISTINCT): the collector then counts them where it sorted.
  bool slot_counts_distinct(size_t a) const;
  bool input_is_float(size_t a) const;
  // Each group's count(DISTINCT) from a collector's counts per key.
  void place_distinct(const KeyedDistinct& k, const GroupIndex& index, size_t groups, PartialStates& s);
  // Where ordered aggregate a's picks lie in each key's block of its
  // collector's picks (slot_picks' order): (first, count).
  std::pair<uint64_t, uint64_t> pick_range(size_t a) const;
  // Fills out.states[a] for ordered aggregate a from its collector's rows.
  void emit(size_t a, const Sorted& rows, AggregationResult& out) const;

  AggregationSpec spec_;
  std::vector<int> inner_of_;  // per aggregate: its index in the inner spec; -1 = kept here
  std::vector<int> inner_values_;  // per inner value input: the spec's index
  std::vector<Collected> collected_;
  std::vector<int> shares_;  // per aggregate: the ordered aggregate whose kept rows it reads; -1 = its own
  std::unique_ptr<AggregationRun> inner_;
  SegmentSorter sorter_;
  std::string sorter_name_;
  std::unique_ptr<OrderedRowsCollector> collector_;
  std::vector<int> slot_of_;  // per aggregate: its collector slot; -1 = none
  std::vector<std::optional<OrderedPick>> picks_;  // per aggregate (the spec's ordered_picks)
  // The groups are the keys the collector saw, its counts theirs (a
  // top-n's tables hold each key's rows, values and best codes): the inner
  // run is not fed, and no group is looked up. Where the collector is
  // top-codes tables of one slot (the host's, or the engine's on its
  // device), counting every row, and the other
  // aggregates are counts of the rows or of that slot's input (settled at
  // the first chunk, whose views tell).
  bool keyed_by_collector_ = false;
  bool engine_collector_ = false;  // the collector is the engine's (the GPU's), not the host's
  bool sunk_ = false;
  bool sorted_by_sorter_ = false;
  // How the groups' values were had, for EXPLAIN ANALYZE: sorted, selected
  // at the positions read (select_picks), or kept as each key's best (the
  // host's top-codes tables).
  const char* form_ = "sorted";
  int threads_ = 1;
  int pass_ = 0;
  std::vector<int64_t> packed_;  // the chunk's packed key codes
  uint64_t values_ = 0;
  double collect_ms_ = 0, sort_ms_ = 0, assign_ms_ = 0, partition_ms_ = 0;  // EXPLAIN ANALYZE
  // finalize()'s parts (EXPLAIN ANALYZE): the collector's sorts and picks,
  // the inner run's finalize, the group index, the values' placement and copy.
  double collector_ms_ = 0, inner_ms_ = 0, index_ms_ = 0, emit_ms_ = 0;
  AggregationReport report_;
};

}  // namespace tally::executor::cpu
