#pragma once
// SELECT planning: binds a SelectStmt against its FROM table (or none) into an
// immutable SelectPlan, and runs it. The plan knows its output columns before
// any row is read, which is what Parse/Describe need.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/cancel.hpp"
#include "executor/explain_tree.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/expression.hpp"
#include "executor/result_set.hpp"

namespace tally {
class AggregateEngine;
}

namespace tally::catalog {
class ViewStore;
}

namespace tally::executor {

class OperatorActuals;
class SessionSequences;
class Settings;
class SystemRelationProvider;
class TableProvider;
class TableSnapshot;
struct BindContext;
struct MaterializedRelation;
struct SelectPlan;
class SharedCte;

// A WITH query visible to a FROM clause.
struct WithQuery {
  std::string name;
  nlohmann::json node;                // its CommonTableExpr
  std::shared_ptr<SharedCte> shared;  // set where it runs once for every reference (shared_cte.hpp)
};

struct PlanContext {
  TableProvider* tables = nullptr;  // null: no tables exist
  // pg_catalog / information_schema relations (null: none are visible).
  SystemRelationProvider* system_relations = nullptr;
  // The views a FROM item may name (null: none); a view is planned as the
  // subquery it stores.
  const catalog::ViewStore* views = nullptr;
  const Settings* settings = nullptr;
  std::vector<uint32_t>* parameter_types = nullptr;
  std::string user;
  std::string database;
  int32_t backend_pid = 0;
  // now() and CURRENT_TIMESTAMP: the start of the transaction, as clock_us()
  // counts it (executor/types/clock.hpp; 0: the clock when bound).
  int64_t transaction_time_us = 0;
  SessionSequences* sequences = nullptr;  // BindContext::sequences
  // Set while planning a subquery: binds a column reference of the
  // enclosing query (null when it has no such column).
  std::function<ExprPtr(const nlohmann::json& column_ref)> outer_column;
  // The WITH queries visible here, innermost last.
  std::vector<WithQuery> ctes;
  // The queries of WITH RECURSIVE that name themselves, as the relations
  // they compute when scanned (recursive_cte.hpp); found before `ctes`.
  std::vector<std::pair<std::string, std::shared_ptr<const MaterializedRelation>>> cte_relations;
  // Set for a branch of a set operation: its untyped literals stay unknown,
  // so the set operation resolves them against the other branches' types
  // (PostgreSQL's UNION rule: SELECT 1 UNION SELECT '2' is integer).
  // plan_select clears it before planning anything nested.
  bool keep_unknown_outputs = false;
  // Set by the FROM planner for a derived table whose rows an outer filter
  // bounds by a ranking window column (`WHERE rn <= k`): output
  // top_n_output needs no row ranked above top_n_k, so the window may run
  // as a top-n per partition. plan_select clears it as keep_unknown_outputs.
  int top_n_output = -1;
  int64_t top_n_k = 0;
  // Set while planning a statement's distinct_rows_form: its count(DISTINCT)s
  // stay as written. plan_select clears it as keep_unknown_outputs.
  bool keep_distinct_counts = false;
};

// Keys a grouped run is restricted to (executor/group_key_filter.hpp).
struct GroupKeyFilter;
// A hash join's test of a scan's keys (executor/operators/key_test.hpp).
struct KeyTest;

// What a running query may use.
struct ExecContext {
  const std::vector<Value>* parameters = nullptr;
  CancelToken* cancel = nullptr;
  int threads = 1;
  uint64_t memory_budget = 0;  // bytes for aggregation state; 0 = unbounded
  std::string engine = "auto";
  std::vector<std::string>* explain = nullptr;  // EXPLAIN ANALYZE lines, when wanted
  OperatorActuals* actuals = nullptr;           // EXPLAIN ANALYZE: each operator's time and rows
  // The database's GPU engine (Database::gpu_engine(); null: none). When
  // null, the aggregation step asks the table snapshot (EngineTableSnapshot).
  AggregateEngine* gpu_engine = nullptr;
  std::string variant;        // SET tally.variant: force a GPU variant ("" = tuner/rules)
  // SET tally.lookup_joins: auto (a plan's lookup form runs where the GPU
  // engine takes aggregates), on (wherever it has one), off.
  std::string lookup_joins = "auto";
  std::string launch_config;  // SET tally.launch_config: force "tpb=..,bps=..,ff=..,rpt=.."
  bool jit = true;            // SET jit: the GPU engine compiles its column programs (off: interprets them)
  // The result goes only to stream_rows (Session's simple query and portal
  // path): result columns that are an aggregate as it is may be AvgParts
  // (value.hpp). Cursors, COPY and INSERT ... SELECT leave it false and get
  // materialized Vectors.
  bool stream_to_client = false;
  // The grouped run this context runs is restricted to these keys (null: all).
  const GroupKeyFilter* group_key_filter = nullptr;
  // The key tests of the hash joins whose chain of probe sides the operator
  // being run heads (HashJoin::run sets them for its probe side and clears
  // them for everything else): a scan applies those whose keys read only
  // its columns, nearest join first.
  std::vector<const KeyTest*> key_tests;
  // The rows being read may stop being wanted before the scans end (a LIMIT
  // without an aggregate or a sort above them): scans then widen their
  // read-ahead gradually (read_ahead.hpp), so that little is read past the
  // rows wanted. Otherwise every worker starts on the first pieces at once.
  bool scans_may_stop = false;
};

// ExecContext::scans_may_stop set for a scope where `may_stop`, as it was after.
struct ScansMayStopScope {
  ScansMayStopScope(ExecContext& context, bool may_stop) : context(context), before(context.scans_may_stop) {
    context.scans_may_stop = before || may_stop;
  }
  ~ScansMayStopScope() { context.scans_may_stop = before; }
  ExecContext& context;
  bool before;
};

// Whether the GPU engine takes the statement's aggregates: a plan's forms
// for the GPU (its lookup form, its distinct-count form) run then.
inline bool gpu_takes_aggregates(const ExecContext& context) {
  return context.gpu_engine != nullptr && context.engine != "cpu";
}

// The threads a query's parallel steps use: ExecContext::threads, whose 0
// (the cpu_threads default) means every worker of the pool and the caller.
inline int worker_threads(const ExecContext& context) {
  return context.threads > 0 ? context.threads : cpu::WorkerPool::shared().workers() + 1;
}

std::shared_ptr<const SelectPlan> plan_select(const nlohmann::json& select, PlanContext& context);
// The session's settings, parameters and identity for binding expressions.
void base_context(BindContext& bind, const PlanContext& context);
// Binds LIMIT and OFFSET (int8 constants or parameters) into `plan`.
void bind_limit_offset(const nlohmann::json& select, PlanContext& context, SelectPlan& plan);
// The output an ORDER BY (GROUP BY, DISTINCT ON: `clause`) item names by
// position (`ORDER BY 2`): its index, 42P10 past the `outputs`, 42601 for a
// constant that is not an integer; -1 when the item is not a constant.
int order_by_position(const nlohmann::json& node, size_t outputs, const char* clause = "ORDER BY");
// The table a plan reads (null: none).
const std::shared_ptr<const TableSnapshot>& select_table(const SelectPlan& plan);
// Result column descriptions (text format).
std::vector<tally::FieldDescription> select_fields(const SelectPlan& plan);
ResultSet run_select(const SelectPlan& plan, ExecContext& context);
// The plan run_select runs for `plan` under `context` (a plan may hold
// another form of itself for the GPU engine), which EXPLAIN shows.
const SelectPlan& plan_to_run(const SelectPlan& plan, const ExecContext& context);
// EXPLAIN's tree of a plan; with `actuals` (EXPLAIN ANALYZE, after the run),
// each operator's actual time and rows.
ExplainNode explain_select(const SelectPlan& plan, const OperatorActuals* actuals = nullptr);

}  // namespace tally::executor
