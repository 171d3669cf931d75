#pragma once
// The aggregation step of a SELECT: consumes the scan's selected rows chunk by
// chunk (sink) and produces the group keys and final aggregate values
// (finalize). make_group_aggregator picks the implementation: an engine behind
// aggregate_engine.hpp (CPU hash engine, GPU) when the query's shape allows it,
// else the generic path that handles any type, DISTINCT and ordered-set
// aggregates.
#include <memory>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "executor/aggregate_function.hpp"
#include "executor/expression.hpp"
#include "executor/prepared_work.hpp"
#include "executor/table_provider.hpp"

namespace tally::executor {

struct ExecContext;

struct AggregateCall {
  std::string name;
  AggregateSignature signature;
  std::vector<ExprPtr> args;  // over the scan, cast to signature.arg_types
  ExprPtr filter;             // FILTER (WHERE ...), may be null
  ExprPtr direct;             // ordered-set direct argument (percentile), may be null
  bool distinct = false;
  bool descending = false;    // WITHIN GROUP (ORDER BY ... DESC)
};

// An aggregate input an engine cannot hold (a numeric expression's value over
// the 18 digits of its int64 input): the statement runs again on the generic
// path, whose arithmetic is exact (run_select).
class EngineInputOverflow : public Error {
 public:
  using Error::Error;
};

// A HAVING conjunct an aggregator may test on its partial states, before it
// builds result columns (having_group_filter): aggregate `aggregate`
// compared (`op`: <, <=, >, >=, =, <>) with an exact constant. It only
// drops groups the conjunct surely rejects; HAVING itself is still
// evaluated over the groups left.
struct GroupFilter {
  size_t aggregate = 0;
  std::string op;
  Numeric constant;  // an integer at scale 0
};

class GroupAggregator {
 public:
  virtual ~GroupAggregator() = default;
  // Memory-bounded engines read the input several times: the scan runs
  // passes() times, calling begin_pass(p) before each.
  virtual int passes() const { return 1; }
  virtual void begin_pass(int /*pass*/) {}
  // One chunk of selected scan rows.
  virtual void sink(const EvalInput& rows) = 0;
  // sink() in two steps, so that a source with chunks in flight on worker
  // threads (ChunkSink::prepare) evaluates several of them at once:
  // prepare() computes what sink() needs from the rows (keys, inputs,
  // FILTERs; thread-safe, it reads no aggregation state), sink_prepared()
  // takes that, in chunk order. An aggregator that prepares nothing (null)
  // is sunk the rows themselves.
  virtual std::shared_ptr<PreparedWork> prepare(const EvalInput& /*rows*/) const { return nullptr; }
  virtual void sink_prepared(PreparedWork* work, const EvalInput& rows) {
    if (work == nullptr) sink(rows);
  }
  // Whether sink_raw can take whole stored chunks (no WHERE) without the
  // scan first converting their columns to Vectors.
  virtual bool wants_raw() const { return false; }
  // Whether the aggregator applies the statement's WHERE itself (given to
  // make_group_aggregator) on the raw path: the scan then hands it whole
  // chunks (sink_raw) rather than the rows WHERE selects.
  virtual bool takes_where() const { return false; }
  // The table columns (of scan_columns) that sink_raw needs read on the host
  // for stored chunk `chunk`: an engine holding some elsewhere (the GPU's
  // device column cache) spares the scan reading them. Asked once per chunk,
  // in chunk order, before that chunk's sink_raw.
  virtual std::vector<int> raw_columns(size_t /*chunk*/, const std::vector<int>& scan_columns) { return scan_columns; }
  // Stored chunk `chunk` of `rows` rows; `batch` holds raw_columns(chunk)
  // (`batch_columns`) in that order, or is null when that named none.
  virtual void sink_raw(size_t /*chunk*/, size_t /*rows*/, const storage::ChunkBatch* /*batch*/,
                        const std::vector<int>& /*batch_columns*/) {}
  // sink_raw's work on a chunk that reads no aggregation state (the
  // engine's WHERE and input programs), done on the thread that read the
  // chunk, several chunks at once; the result (holding `batch`) goes to
  // sink_raw_prepared in chunk order. nullptr: sink_raw does it all.
  // Thread-safe.
  virtual std::shared_ptr<PreparedWork> prepare_raw(size_t /*chunk*/, size_t /*rows*/,
                                                    const std::shared_ptr<const storage::ChunkBatch>& /*batch*/,
                                                    const std::vector<int>& /*batch_columns*/) const {
    return nullptr;
  }
  virtual void sink_raw_prepared(PreparedWork* /*work*/) {}
  // Which of finalize's columns (1 = may) go to the client as they are, so
  // an avg among them may come back as AvgParts (value.hpp) rather than
  // Numerics. Called before finalize; aggregators that ignore it are correct.
  virtual void allow_deferred_avg(std::vector<uint8_t> /*columns*/) {}
  // HAVING's conjuncts finalize may test before it builds the columns of
  // all the groups (the groups of `GROUP BY l_orderkey HAVING sum(l_quantity)
  // > 300` are millions, its rows a few hundred); aggregators that ignore it
  // are correct. Called before finalize.
  virtual void set_group_filter(std::vector<GroupFilter> /*filter*/) {}
  // ORDER BY ... LIMIT over the aggregation's columns (no HAVING, DISTINCT
  // or windows between them): finalize may build the aggregates of only the
  // groups that can be among the first `count` rows, by `keys` (ties of the
  // last one kept), so that `GROUP BY WatchID, ClientIP ORDER BY count(*)
  // DESC LIMIT 10` does not build twenty million averages for ten rows. The
  // sort above still orders what comes back; aggregators that ignore it are
  // correct. Called before finalize.
  struct OrderKey {
    size_t column = 0;  // of finalize's columns: [keys..., aggregates...]
    bool descending = false;
    bool nulls_first = false;
  };
  struct TopGroups {
    std::vector<OrderKey> keys;
    size_t count = 0;
  };
  virtual void set_top_groups(TopGroups /*top*/) {}
  // Groups the filter, or the cut to the top groups, dropped in finalize
  // (not among its result).
  virtual uint64_t groups_filtered_out() const { return 0; }
  // Appends the key columns then one column per aggregate; returns the group count.
  virtual size_t finalize(std::vector<Vector>& columns) = 0;
  // EXPLAIN ANALYZE lines: engine, variant, configuration, estimates.
  virtual std::vector<std::string> explain() const = 0;
};

// How the caller feeds an aggregator its rows: always evaluated (sink), or
// (run_select) `table`'s stored chunks to sink_raw whenever wants_raw() says
// so (and takes_where(), under a WHERE). Only the second lets an engine
// evaluate key and input expressions itself as column programs.
enum class RowFeed : uint8_t { evaluated, stored_chunks };

// `table` (may be null) gives column statistics for key ranges.
std::unique_ptr<GroupAggregator> make_group_aggregator(const std::vector<ExprPtr>& keys,
                                                       const std::vector<AggregateCall>& aggregates,
                                                       const ExecContext& context, const TableSnapshot* table = nullptr,
                                                       const Expr* where = nullptr, RowFeed feed = RowFeed::evaluated);
// The engine path (engine_aggregator.cpp); null when the query's shape needs the generic path.
std::unique_ptr<GroupAggregator> make_engine_aggregator(const std::vector<ExprPtr>& keys,
                                                        const std::vector<AggregateCall>& aggregates,
                                                        const ExecContext& context, const TableSnapshot* table,
                                                        const Expr* where = nullptr, RowFeed feed = RowFeed::evaluated);
// The engine EXPLAIN (without ANALYZE) names for this aggregation.
std::string describe_engine_choice(const std::vector<ExprPtr>& keys, const std::vector<AggregateCall>& aggregates);

}  // namespace tally::executor
