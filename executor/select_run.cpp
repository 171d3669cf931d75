// Running a SelectPlan: the scan (chunk columns converted from storage),
// WHERE, the aggregation, HAVING, the outputs, DISTINCT, ORDER BY and
// LIMIT/OFFSET; and its EXPLAIN lines.
#include "executor/select_plan.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <set>

#include "common/error.hpp"
#include "common/memory_tracker.hpp"
#include "common/process_cpu_time.hpp"
#include "common/statement_timeline.hpp"
#include "executor/aggregate_function.hpp"
#include "executor/binder.hpp"
#include "executor/cancel_point.hpp"
#include "executor/explain_costs.hpp"
#include "executor/read_ahead.hpp"
#include "executor/statement_context.hpp"
#include "executor/scan_pieces.hpp"
#include "executor/top_n_chunk_bound.hpp"
#include "executor/cpu/parallel.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/group_aggregator.hpp"
#include "executor/group_key_filter.hpp"
#include "executor/lookup_rewrite.hpp"
#include "executor/grouping_sets_aggregator.hpp"
#include "executor/having_filter.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/storage_vectors.hpp"
#include "executor/operators/physical_operator.hpp"
#include "executor/operators/one_time_filter.hpp"
#include "executor/operators/table_scan.hpp"
#include "executor/expression_copy.hpp"
#include "executor/operators/window.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/row_selection.hpp"
#include "executor/row_sort.hpp"
#include "executor/result_order.hpp"
#include "executor/subquery_expr.hpp"
#include "executor/select_plan_detail.hpp"
#include "executor/shared_cte.hpp"
#include "executor/settings.hpp"
#include "executor/table_provider.hpp"
#include "executor/value_codec.hpp"
#include "storage/numeric_slot.hpp"

namespace tally::executor {


namespace {

// One scanned chunk of a single-table SELECT: the rows it had, the table
// columns (by column number) of the rows WHERE kept, and what the
// aggregator's prepare() or the outputs made of them when that ran ahead.
struct Evaluated {
  size_t scanned = 0;
  size_t rows = 0;
  std::vector<Vector> selected;
  std::shared_ptr<PreparedWork> prepared;
  EvalInput input(const std::vector<Value>* parameters) const {
    EvalInput in;
    in.parameters = parameters;
    in.rows = rows;
    for (const Vector& v : selected) in.columns.push_back(rows > 0 && v.count == rows ? &v : nullptr);
    return in;
  }
};

// Whether the rows' evaluation calls a volatile function (nextval,
// random), which must see the rows one at a time in order.
bool volatile_evaluation(const SelectPlan& plan) {
  auto any = [](const std::vector<ExprPtr>& exprs) {
    return std::any_of(exprs.begin(), exprs.end(), [](const ExprPtr& e) { return e && has_volatile_function(*e); });
  };
  if (any(plan.outputs) || any(plan.group_keys)) return true;
  for (const auto& call : plan.aggregates) {
    if (any(call.args) || (call.filter && has_volatile_function(*call.filter))) return true;
  }
  return false;
}

// The aggregation output columns that reach the result as they are (moved
// by run_select, nothing reorders, filters or evaluates them), by index:
// those may stay unmaterialized (GroupAggregator::allow_deferred_avg). Any
// output that is not a bare column reference, or a column listed twice,
// keeps every column materialized (simple and safe).
std::vector<uint8_t> deferrable_columns(const SelectPlan& plan) {
  if (plan.having || plan.distinct || !plan.distinct_on.empty() || !plan.sort.empty() || plan.limit || plan.offset ||
      plan.windows || plan.outputs.size() != plan.visible) {
    return {};
  }
  std::vector<uint8_t> columns;
  for (const auto& output : plan.outputs) {
    auto* ref = dynamic_cast<const ColumnExpr*>(output.get());
    if (ref == nullptr || ref->index < 0) return {};
    const auto index = static_cast<size_t>(ref->index);
    if (columns.size() <= index) columns.resize(index + 1, 0);
    if (columns[index] != 0) return {};
    columns[index] = 1;
  }
  return columns;
}

void release_in_background(std::unique_ptr<GroupAggregator> aggregator) {
  std::shared_ptr<GroupAggregator> shared(std::move(aggregator));
  cpu::WorkerPool& pool = cpu::WorkerPool::shared();
  if (pool.workers() == 0) return;  // freed here
  try {
    pool.submit([shared]() mutable { shared.reset(); });
  } catch (...) {
    // No memory for the task: freed here, as `shared` goes.
  }
}

}  // namespace

namespace {

// run_select_once's body; `aggregator` is the caller's, so that it decides
// how a failed statement's groups are freed.
ResultSet run_select_with(const SelectPlan& plan, ExecContext& ec, std::unique_ptr<GroupAggregator>& aggregator) {
  const CancelScope cancel_scope(ec.cancel);
  // Paths that did not install a statement tracker (cursors, COPY, INSERT ...
  // SELECT) get one for the select; a nested select keeps its statement's.
  std::shared_ptr<MemoryTracker> tracker = current_memory_tracker();
  if (!tracker) tracker = std::make_shared<MemoryTracker>(ec.memory_budget);
  const MemoryScope memory_scope(std::move(tracker));
  ResultSet result;
  result.fields = select_fields(plan);
  const auto started = std::chrono::steady_clock::now();
  const double cpu_started = process_cpu_ms();
  if (ec.stream_to_client) statement_timeline().stamp(StatementTimeline::executor_start);
  size_t ncols = plan.table ? plan.table->columns().size() : 0;
  std::vector<Vector> out_columns;
  for (const auto& o : plan.outputs) out_columns.emplace_back(o->type);
  size_t out_rows = 0;
  // The result's rows against the statement's memory budget, counted before
  // each chunk's rows are appended.
  BlockReservation out_memory(materialized_row_bytes(out_columns), size_t{1} << 16);

  if (plan.aggregate) {
    aggregator = plan.grouping_sets.empty() ? make_group_aggregator(plan.group_keys, plan.aggregates, ec, plan.table.get(),
                                                                                  plan.where.get(), RowFeed::stored_chunks)
                                            : make_grouping_sets_aggregator(plan, ec, plan.table.get());
  }
  const bool raw = aggregator && aggregator->wants_raw() && (!plan.where || aggregator->takes_where()) && plan.table &&
                   !ec.group_key_filter;
  if (aggregator && ec.stream_to_client) aggregator->allow_deferred_avg(deferrable_columns(plan));
  if (aggregator && plan.having && plan.grouping_sets.empty())
    aggregator->set_group_filter(having_group_filter(*plan.having, plan.group_keys.size(), plan.aggregates.size(), ec.parameters));
  if (aggregator) aggregator->set_top_groups(top_groups(plan, ec));

  // Early stop for plain scans with LIMIT and no ORDER BY / DISTINCT.
  int64_t wanted = -1;
  if (!plan.aggregate && plan.sort.empty() && !plan.distinct && plan.distinct_on.empty() && plan.limit) {
    const int64_t limit = constant_int(plan.limit, ec, -1);
    if (limit >= 0) wanted = limit + std::max<int64_t>(0, constant_int(plan.offset, ec, 0));
  }

  const size_t chunks = plan.table ? plan.table->chunk_count() : 1;
  uint64_t rows_scanned = 0;
  // Plain scans without WHERE: output columns that are bare table columns
  // are converted from storage straight into the result, reserved once for
  // every row (no intermediate Vectors, no regrowth). Not under ORDER BY ...
  // LIMIT k, where each chunk converts its k first rows only.
  std::vector<int> direct(plan.outputs.size(), -1);  // index into scan_columns, or -1
  bool all_direct = false;
  if (!plan.aggregate && !plan.where && plan.table && chunk_top_n(plan, ec) == 0) {
    all_direct = true;
    for (size_t o = 0; o < plan.outputs.size(); ++o) {
      auto* ref = dynamic_cast<const ColumnExpr*>(plan.outputs[o].get());
      const auto& scan = plan.scan_columns;
      const auto at = ref ? std::find(scan.begin(), scan.end(), ref->index) : scan.end();
      if (ref && at != scan.end() && plan.table->columns()[static_cast<size_t>(ref->index)].type == ref->type) {
        direct[o] = static_cast<int>(at - scan.begin());
      } else {
        all_direct = false;
      }
    }
    if (wanted < 0) {
      for (size_t o = 0; o < plan.outputs.size(); ++o) {
        if (direct[o] >= 0) out_columns[o].reserve(static_cast<size_t>(plan.table->row_count()));
      }
    }
  }
  const int passes = aggregator ? aggregator->passes() : 1;
  for (const auto* subquery : plan.subqueries) subquery->reset();
  // The operator tree's rows: grouped, or evaluated into the outputs. The
  // evaluation (the aggregator's prepare(), or the outputs) is the sink's
  // prepare(): the scan runs it on its worker threads, several chunks at
  // once, unless a volatile function (nextval, random) must run in row order.
  struct Outputs final : PreparedWork {
    std::vector<Vector> columns;
    size_t rows = 0;
  };
  struct SourceSink final : PreparingSink {
    std::function<void(DataChunk&)> prepare_fn;
    std::function<bool(DataChunk&)> take_fn;
    bool parallel = true;
    void prepare(DataChunk& chunk) const override {
      if (parallel) prepare_fn(chunk);
    }
    bool consume_prepared(DataChunk& chunk) override {
      if (!parallel) prepare_fn(chunk);
      return take_fn(chunk);
    }
  } source_sink;
  source_sink.parallel = !volatile_evaluation(plan);
  // Selected rows evaluated ahead of their turn (thread-safe: the
  // aggregator's prepare() reads no aggregation state), then taken in chunk
  // order: both sources (the operator tree, the stored table) share these.
  // Under ORDER BY ... LIMIT k each chunk keeps only the rows that can be among the first k.
  const size_t top_n = chunk_top_n(plan, ec);
  // `owned`: the rows' columns by space index, the caller done with them
  // (evaluate_taking moves the outputs that are such columns as they are).
  std::vector<const Expr*> output_exprs;
  for (const auto& output : plan.outputs) output_exprs.push_back(output.get());
  auto prepare_rows = [&plan, &aggregator, top_n, &output_exprs](const EvalInput& sel,
                                                                  const std::vector<Vector*>& owned) -> std::shared_ptr<PreparedWork> {
    if (aggregator) return aggregator->prepare(sel);
    auto outputs = std::make_shared<Outputs>();
    outputs->rows = sel.rows;
    if (top_n > 0) {
      outputs->columns = evaluate_top_n_rows(plan, top_n, sel);
      if (!outputs->columns.empty()) outputs->rows = outputs->columns[0].size();
      return outputs;
    }
    outputs->columns = evaluate_taking(output_exprs, sel, owned);
    return outputs;
  };
  // An evaluated stored chunk's selected columns (by table column number, the space index).
  auto selected_owned = [](Evaluated& e) {
    std::vector<Vector*> owned;
    for (Vector& v : e.selected) owned.push_back(&v);
    return owned;
  };
  auto take_rows = [&](PreparedWork* work, const EvalInput& sel) {
    if (aggregator) {
      aggregator->sink_prepared(work, sel);
      return;
    }
    auto& outputs = static_cast<Outputs&>(*work);
    out_memory.add(outputs.rows);
    for (size_t o = 0; o < plan.outputs.size(); ++o) append_vector(out_columns[o], std::move(outputs.columns[o]));
    out_rows += outputs.rows;
  };
  auto source_rows = [&](const DataChunk& chunk) {
    return space_input(chunk, plan.source->layout(), plan.source_width, ec.parameters);
  };
  source_sink.prepare_fn = [&](DataChunk& chunk) {
    if (ec.group_key_filter) {
      const std::vector<uint32_t> keep = rows_with_wanted_keys(*ec.group_key_filter, plan.group_keys, source_rows(chunk));
      if (keep.size() < chunk.rows) chunk = gather_chunk(chunk, keep);
      if (chunk.rows == 0) return;
    }
    chunk.prepared = prepare_rows(source_rows(chunk), columns_by_space(chunk, plan.source->layout(), plan.source_width));
  };
  source_sink.take_fn = [&](DataChunk& chunk) -> bool {
    const EvalInput sel = source_rows(chunk);
    rows_scanned += sel.rows;
    take_rows(chunk.prepared.get(), sel);
    return wanted < 0 || static_cast<int64_t>(out_rows) < wanted;
  };
  std::string skipped_by_top;  // EXPLAIN ANALYZE's line of TopNChunkBound
  for (int pass = 0; pass < passes; ++pass) {
  if (aggregator) aggregator->begin_pass(pass);
  if (plan.source) {
    const ScansMayStopScope may_stop(ec, wanted >= 0);
    run_operator(*plan.source, ec, source_sink);
    continue;
  }
  // Chunks are read ahead of the scan (a LIMIT's scan reads only what it
  // takes); an aggregation holding columns elsewhere has the others read.
  // Each read brings its chunk with the columns it read (raw_columns). A
  // chunk whose rows are evaluated (WHERE, then the aggregator's prepare()
  // or the outputs) is evaluated there too, on the read-ahead's worker,
  // unless a volatile function or a window needs the rows in order.
  const bool evaluate_ahead = plan.table && !raw && !all_direct && wanted < 0 && !plan.windows && source_sink.parallel;
  struct Read {
    std::shared_ptr<const storage::ChunkBatch> batch;
    std::vector<int> columns;
    Evaluated evaluated;                      // when evaluate_ahead
    std::shared_ptr<PreparedWork> raw_ahead;  // raw: the aggregator's prepare_raw
  };
  // The chunk's converted columns, the rows WHERE keeps, and (ahead) what
  // the consumer's evaluation made of them.
  // Rows a chunk's WHERE is split into parts of, at least, where the table
  // has fewer chunks than cores.
  constexpr size_t kWhereRowsPerPart = size_t{1} << 16;
  const int cores = worker_threads(ec);
  // A table of fewer chunks than half the workers (TPC-H's customer) is read
  // in slices, one per worker; others by chunk: each piece the engine takes
  // has fixed costs (a GPU run's staging and launches).
  const size_t depth = wanted >= 0 || !plan.table ? 0 : ReadAhead<Read>::default_depth();
  // WHERE tested as the Seq Scan operator tests its filters: comparisons
  // with constants on the stored values, text conditions on dictionary
  // codes, other conjuncts on the rows those keep; the columns are then
  // converted for the rows that pass, not for the whole chunk. Its
  // comparisons also skip the chunks whose statistics rule every row out,
  // on the raw path too (whose engine tests WHERE itself).
  std::optional<TableScan> where_scan;
  std::shared_ptr<TableScan::FilterRun> where_run;
  if (plan.table && plan.where) {
    if (ExprPtr where = copy_expr(*plan.where)) {
      std::vector<ExprPtr> filters;
      filters.push_back(std::move(where));
      where_scan.emplace(plan.table, std::string(), plan.scan_columns, plan.scan_columns, ncols, std::move(filters), 0.0);
      if (!raw && !ec.group_key_filter) where_run = where_scan->start_filtering(ec.parameters);
    }
  }
  std::vector<uint8_t> skipped = where_scan ? where_scan->skipped_chunks(ec.parameters) : std::vector<uint8_t>{};
  // A conjunct that reads no column and is not true rules out every chunk
  // (operators/one_time_filter.hpp), before any is read.
  if (plan.table && plan.where && !one_time_conditions_hold(*plan.where, ec.parameters)) skipped.assign(chunks, 1);
  if (ec.explain != nullptr && !skipped.empty()) ec.explain->push_back("Seq Scan on " + plan.table->name() + ": " + TableScan::skipped_line(skipped));
  const size_t chunks_read = chunks - static_cast<size_t>(std::count(skipped.begin(), skipped.end(), uint8_t{1}));
  const bool sliced = plan.table && !raw && !all_direct && chunks_read * 2 < depth;
  std::vector<ScanPiece> pieces =
      plan.table ? scan_pieces(*plan.table, sliced ? depth : 1, skipped) : std::vector<ScanPiece>{ScanPiece{}};
  const bool where_never_raises = !plan.where || (where_scan && where_scan->filters_never_raise());
  const auto top_bound = top_n > 0 && plan.table && !aggregator && wanted < 0
                             ? TopNChunkBound::plan(plan, top_n, where_never_raises) : nullptr;
  if (top_bound) top_bound->order(pieces);
  ChunkReads reads(pieces, chunks, [&plan](size_t c) { return plan.table->read_chunk(c, plan.scan_columns); });
  const int where_parts = plan.table && plan.where && pieces.size() < static_cast<size_t>(cores)
                              ? cores / static_cast<int>(std::max<size_t>(1, pieces.size()))
                              : 1;
  if (plan.table && plan.where && chunks > 0) run_subqueries_ahead(*plan.where, ec.parameters);
  auto where_parts_of = [where_parts](size_t rows) {
    return static_cast<int>(std::min<size_t>(static_cast<size_t>(where_parts), rows / kWhereRowsPerPart));
  };
  auto filter_stored = [&plan, &ec, &where_scan, &where_run, where_parts_of](const storage::ChunkBatch& batch,
                                                                             Evaluated& e) {
    const int parts = std::max(1, where_parts_of(batch.rows));
    std::vector<DataChunk> kept(static_cast<size_t>(parts));
    cpu::parallel_for(parts, batch.rows, [&](int part, size_t begin, size_t end) {
      kept[static_cast<size_t>(part)] = where_scan->filter_rows(batch, begin, end, ec.parameters, *where_run);
    });
    e.scanned = batch.rows;
    for (size_t i = 0; i < plan.scan_columns.size(); ++i) {
      Vector& column = e.selected[static_cast<size_t>(plan.scan_columns[i])];
      column = std::move(kept[0].columns[i]);
      for (size_t part = 1; part < kept.size(); ++part) append_vector(column, std::move(kept[part].columns[i]));
    }
    for (const DataChunk& part : kept) e.rows += part.rows;
  };
  // Under ORDER BY ... LIMIT k, the rows WHERE keeps as chunk row numbers:
  // the sort keys are converted at those, every column at the k kept.
  auto passing_stored = [&ec, &where_scan, &where_run, where_parts_of](const storage::ChunkBatch& batch) {
    const int parts = std::max(1, where_parts_of(batch.rows));
    std::vector<std::vector<uint32_t>> kept(static_cast<size_t>(parts));
    cpu::parallel_for(parts, batch.rows, [&](int part, size_t begin, size_t end) {
      kept[static_cast<size_t>(part)] = where_scan->passing_rows(batch, begin, end, ec.parameters, *where_run);
    });
    for (size_t part = 1; part < kept.size(); ++part) kept[0].insert(kept[0].end(), kept[part].begin(), kept[part].end());
    return std::move(kept[0]);
  };
  auto take_stored_rows = [&plan](const storage::ChunkBatch& batch, const std::vector<uint32_t>& rows, Evaluated& e) {
    e.scanned = batch.rows;
    e.rows = rows.size();
    for (size_t i = 0; i < plan.scan_columns.size(); ++i) {
      const auto c = static_cast<size_t>(plan.scan_columns[i]);
      e.selected[c] = vector_from_stored_rows(batch.columns[i], rows, plan.table->columns()[c].type);
    }
  };
  auto evaluate = [&plan, &ec, ncols, &prepare_rows, &selected_owned, evaluate_ahead, where_parts_of, top_n, &where_run,
                   &filter_stored, &passing_stored, &take_stored_rows](const storage::ChunkBatch* batch) {
    Evaluated e;
    e.selected.resize(ncols);
    if (batch != nullptr && where_run) {
      if (top_n > 0) {
        const std::vector<uint32_t> passing = passing_stored(*batch);
        const auto kept = top_n_rows_of_chunk(plan, top_n, *batch, ec.parameters, 1, &passing);
        take_stored_rows(*batch, kept ? *kept : passing, e);
      } else {
        filter_stored(*batch, e);
      }
      if (evaluate_ahead && e.rows > 0) e.prepared = prepare_rows(e.input(ec.parameters), selected_owned(e));
      return e;
    }
    if (batch != nullptr && top_n > 0 && !ec.group_key_filter) {
      if (auto kept = top_n_rows_of_chunk(plan, top_n, *batch, ec.parameters, where_parts_of(batch->rows))) {
        take_stored_rows(*batch, *kept, e);
        if (evaluate_ahead && e.rows > 0) e.prepared = prepare_rows(e.input(ec.parameters), selected_owned(e));
        return e;
      }
    }
    std::vector<Vector> converted(ncols);
    EvalInput input;
    input.parameters = ec.parameters;
    input.columns.assign(ncols, nullptr);
    if (batch != nullptr && ec.group_key_filter) {
      // The rows whose group keys the filter holds first: the columns are
      // converted for those rows only (a few parts' of lineitem's millions).
      const std::vector<uint32_t> wanted = stored_rows_with_wanted_keys(
          *ec.group_key_filter, plan.group_keys, *batch, plan.scan_columns, plan.table->columns(), ec.parameters);
      for (size_t i = 0; i < plan.scan_columns.size(); ++i) {
        const auto c = static_cast<size_t>(plan.scan_columns[i]);
        converted[c] = vector_from_stored_rows(batch->columns[i], wanted, plan.table->columns()[c].type);
        input.columns[c] = &converted[c];
      }
      input.rows = wanted.size();
      e.scanned = batch->rows;
    } else if (batch != nullptr) {
      input.rows = batch->rows;
      for (size_t i = 0; i < plan.scan_columns.size(); ++i) {
        const auto c = static_cast<size_t>(plan.scan_columns[i]);
        converted[c] = vector_from_storage(batch->columns[i], plan.table->columns()[c].type);
        input.columns[c] = &converted[c];
      }
    } else {
      input.rows = 1;
    }
    if (!ec.group_key_filter || batch == nullptr) e.scanned = input.rows;
    if (input.rows == 0) return e;
    const std::vector<uint32_t> rows = select_rows_in_parts(plan.where.get(), input, where_parts_of(input.rows));
    e.rows = rows.size();
    if (rows.empty()) return e;
    for (int c : plan.scan_columns) {
      const auto i = static_cast<size_t>(c);
      e.selected[i] = rows.size() == input.rows ? std::move(converted[i]) : gather(converted[i], rows);
    }
    if (evaluate_ahead) e.prepared = prepare_rows(e.input(ec.parameters), selected_owned(e));
    return e;
  };
  ReadAhead<Read> ahead(
      depth, plan.table ? pieces.size() : 0,
      [&](size_t p) -> ReadAhead<Read>::Piece {
        const ScanPiece& piece = pieces[p];
        std::vector<int> columns = raw ? aggregator->raw_columns(piece.chunk, plan.scan_columns) : plan.scan_columns;
        // A raw chunk whose columns are all held elsewhere is not read at all.
        const bool nothing_read = raw && columns.empty();
        return {[table = plan.table.get(), piece, columns = std::move(columns), raw, evaluate_ahead, &evaluate, &reads,
                 held = aggregator.get(), bound = top_bound.get()]() {
                  Read read{nullptr, columns, {}, {}};
                  if (bound != nullptr && bound->skips(piece.chunk)) return read;
                  if (raw) {
                    if (!columns.empty()) read.batch = table->read_chunk(piece.chunk, columns);
                    read.raw_ahead = held->prepare_raw(piece.chunk, table->chunk_rows(piece.chunk), read.batch, read.columns);
                    return read;
                  }
                  read.batch = reads.rows(piece);
                  if (evaluate_ahead) read.evaluated = evaluate(read.batch.get());
                  return read;
                },
                nothing_read};
      },
      /*may_stop=*/false);
  for (size_t p = 0; p < pieces.size(); ++p) {
    if (ec.cancel) ec.cancel->check();
    if (wanted >= 0 && static_cast<int64_t>(out_rows) >= wanted) break;
    Evaluated e;
    if (plan.table) {
      Read read = ahead.take();
      if (top_bound && !read.batch) continue;  // skipped by the rows kept so far
      const size_t chunk = pieces[p].chunk;
      if (raw) {
        const size_t rows = plan.table->chunk_rows(chunk);
        rows_scanned += rows;
        if (read.raw_ahead) aggregator->sink_raw_prepared(read.raw_ahead.get());
        else aggregator->sink_raw(chunk, rows, read.batch.get(), read.columns);
        continue;
      }
      if (all_direct) {
        rows_scanned += read.batch->rows;
        out_memory.add(read.batch->rows);
        for (size_t o = 0; o < plan.outputs.size(); ++o) {
          append_from_storage(out_columns[o], read.batch->columns[static_cast<size_t>(direct[o])], plan.outputs[o]->type);
        }
        out_rows += read.batch->rows;
        continue;
      }
      e = evaluate_ahead ? std::move(read.evaluated) : evaluate(read.batch.get());
    } else {
      e = evaluate(nullptr);
    }
    rows_scanned += e.scanned;
    if (e.rows == 0) continue;
    const EvalInput sel = e.input(ec.parameters);
    if (evaluate_ahead) {
      take_rows(e.prepared.get(), sel);
      if (top_bound) top_bound->update(out_columns[static_cast<size_t>(plan.sort[0].column)]);
      continue;
    }
    if (plan.aggregate) {
      aggregator->sink(sel);
      continue;
    }
    out_memory.add(sel.rows);
    std::vector<Vector> window_columns;
    const EvalInput rows_in = plan.windows ? with_windows(*plan.windows, sel, window_columns) : sel;
    for (size_t o = 0; o < plan.outputs.size(); ++o) append_vector(out_columns[o], plan.outputs[o]->evaluate(rows_in));
    out_rows += sel.rows;
  }
  if (top_bound) skipped_by_top = top_bound->explain();
  }  // passes

  if (plan.aggregate) {
    std::vector<Vector> agg_columns;
    size_t groups = aggregator->finalize(agg_columns);
    if (ec.cancel) ec.cancel->check();
    out_memory.add(groups);
    EvalInput post;
    post.parameters = ec.parameters;
    post.rows = groups;
    for (const auto& c : agg_columns) post.columns.push_back(&c);
    // Without HAVING every group is kept (no row list is built). Over many
    // groups HAVING is evaluated in parts on the workers (a volatile
    // function sees the groups in order, on this thread).
    const int having_parts = plan.having ? having_parts_for(*plan.having, groups, ec.threads) : 1;
    std::vector<uint32_t> rows =
        plan.having ? select_rows_in_parts(plan.having.get(), post, having_parts) : std::vector<uint32_t>();
    std::vector<Vector> kept;
    EvalInput having_input = post;
    if (plan.having && rows.size() != groups) {
      for (const auto& c : agg_columns) kept.push_back(gather(c, rows));
      having_input.columns.clear();
      for (const auto& c : kept) having_input.columns.push_back(&c);
      having_input.rows = rows.size();
    }
    // Windows run over the groups HAVING kept; their results follow the
    // aggregation's columns.
    std::vector<Vector> window_columns;
    if (plan.windows) having_input = with_windows(*plan.windows, having_input, window_columns);
    // Bare references to the aggregation output are moved, not copied (the
    // common case: keys and aggregates listed as they are), where HAVING and
    // windows left its columns as they are.
    std::vector<Vector*> owned;
    if (kept.empty() && !plan.windows)
      for (Vector& c : agg_columns) owned.push_back(&c);
    out_columns = evaluate_taking(output_exprs, having_input, owned);
    out_rows = having_input.rows;
    if (ec.explain) {
      for (auto& line : aggregator->explain()) ec.explain->push_back(line);
      ec.explain->push_back("Actual groups: " + std::to_string(groups + aggregator->groups_filtered_out()));
    }
  }
  order_and_limit(plan, result, out_columns, out_rows, ec);
  if (ec.stream_to_client) {
    statement_timeline().stamp(StatementTimeline::executor_end);
    // The engine run is released after the reply (its pools, the tuner's
    // hand-over), not between the executor's end and the first DataRow.
    if (aggregator) result.retained = std::shared_ptr<GroupAggregator>(std::move(aggregator));
  }
  if (ec.explain) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    if (!skipped_by_top.empty()) ec.explain->push_back(skipped_by_top);
    ec.explain->push_back("Rows scanned: " + std::to_string(rows_scanned) + ", rows returned: " + std::to_string(result.rows));
    ec.explain->push_back(cpu_time_line(process_cpu_ms() - cpu_started, ms));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%.3f ms", kExecutionTime, ms);
    ec.explain->push_back(buf);
  }
  return result;
}

ResultSet run_select_once(const SelectPlan& plan, ExecContext& ec) {
  // A cancelled or failed statement answers at once: millions of groups or
  // distinct values take up to seconds to free, so they are freed on a
  // worker. Not after running out of memory: then they are freed before
  // the error answers, so that the next statement finds the memory back.
  std::unique_ptr<GroupAggregator> aggregator;
  try {
    return run_select_with(plan, ec, aggregator);
  } catch (const std::bad_alloc&) {
    aggregator.reset();
    throw;
  } catch (const Error& e) {
    if (e.state() == SqlState::out_of_memory) aggregator.reset();
    if (aggregator) release_in_background(std::move(aggregator));
    throw;
  } catch (...) {
    if (aggregator) release_in_background(std::move(aggregator));
    throw;
  }
}

}  // namespace

const SelectPlan& plan_to_run(const SelectPlan& plan, const ExecContext& ec) {
  return plan.distinct_rows_form && gpu_takes_aggregates(ec) && ec.engine != "generic" ? *plan.distinct_rows_form : plan;
}

ResultSet run_select(const SelectPlan& plan, ExecContext& ec) {
  const StatementContextScope statement(ec);
  for (const auto& cte : plan.shared_ctes) cte->reset();
  // The lookup form pays where its programs run on the GPU; on the CPU
  // engine the hash joins' tests of stored keys are faster.
  const bool lookups = ec.lookup_joins == "on" || (ec.lookup_joins == "auto" && gpu_takes_aggregates(ec));
  if (plan.lookup_form && lookups && ec.engine != "generic") {
    if (std::optional<ResultSet> lookups = run_lookup_form(*plan.lookup_form, ec)) return std::move(*lookups);
  }
  if (&plan_to_run(plan, ec) != &plan) return run_select(plan_to_run(plan, ec), ec);
  try {
    return run_select_once(plan, ec);
  } catch (const EngineInputOverflow&) {
    // Nothing has reached the client yet (an aggregate's rows go out after
    // it ends): the generic path answers instead, as PostgreSQL would.
    ExecContext generic = ec;
    generic.engine = "generic";
    return run_select_once(plan, generic);
  }
}

namespace {

// LIMIT's row count when it is a constant (null: none, or a parameter).
std::optional<double> constant_limit(const ExprPtr& limit) {
  if (!limit) return std::nullopt;
  try {
    const Value v = evaluate_constant(*limit, nullptr);
    if (const auto* n = std::get_if<int64_t>(&v)) return static_cast<double>(std::max<int64_t>(*n, 0));
  } catch (const Error&) {
    // A parameter: unknown until bound.
  }
  return std::nullopt;
}

}  // namespace

// The nodes from the bottom up, each with PostgreSQL's cost annotation.
ExplainNode explain_select(const SelectPlan& plan, const OperatorActuals* actuals) {
  ExplainNode node;
  if (plan.table) {
    node.label = "Seq Scan on " + plan.table->name();
    node.node_type = "Seq Scan";
    node.properties = {{"Relation Name", plan.table->name()}, {"Alias", plan.table->name()}};
    node.cost = scan_cost(*plan.table, plan.scan_columns, plan.where != nullptr);
    node.details.push_back("Chunks: " + std::to_string(plan.table->chunk_count()) +
                           ", rows: " + std::to_string(plan.table->row_count()));
    if (plan.where) node.details.push_back("Filter: WHERE");
  } else if (plan.source) {
    node = explain_operator(*plan.source, actuals);
  }
  std::vector<SqlType> output_types;
  for (size_t o = 0; o < plan.visible && o < plan.outputs.size(); ++o) output_types.push_back(plan.outputs[o]->type);
  const int width = row_width(output_types);
  if (!plan.table && !plan.source) {
    // No FROM: one row of the outputs.
    node.label = node.node_type = "Result";
    node.cost.total = kCpuTupleCost;
    node.cost.width = width;
  }
  // Each level above takes the tree so far as its one child.
  auto wrap = [&](std::string label, std::string type, const PlanCost& cost, std::vector<std::string> details,
                  std::vector<std::pair<std::string, std::string>> properties = {}) {
    ExplainNode parent;
    parent.label = std::move(label);
    parent.node_type = std::move(type);
    parent.properties = std::move(properties);
    parent.cost = cost;
    parent.details = std::move(details);
    parent.children.push_back(std::move(node));
    node = std::move(parent);
  };
  const PlanCost input = node.cost;
  PlanCost cost = input;
  if (plan.aggregate) {
    const double groups = estimate_groups(plan.group_keys, plan.table.get(), input.rows) *
                          std::max<size_t>(1, plan.grouping_sets.size()) *
                          (plan.having ? kDefaultFilterSelectivity : 1.0);
    cost = aggregate_cost(input, std::max(1.0, groups), plan.aggregates.size(), width);
    std::vector<std::string> details;
    details.push_back("Keys: " + std::to_string(plan.group_keys.size()) +
                      ", aggregates: " + std::to_string(plan.aggregates.size()));
    if (!plan.grouping_sets.empty()) details.push_back("Grouping Sets: " + std::to_string(plan.grouping_sets.size()));
    if (plan.having) details.push_back("Filter: HAVING");
    details.push_back("Engine: " + describe_engine_choice(plan.group_keys, plan.aggregates));
    const bool hashed = !plan.group_keys.empty();
    wrap(hashed ? "HashAggregate" : "Aggregate", "Aggregate", cost, std::move(details),
         {{"Strategy", hashed ? "Hashed" : "Plain"}, {"Partial Mode", "Simple"}});
  }
  cost.width = width;
  if (plan.windows) {
    cost.total += cost.rows * kCpuOperatorCost;
    wrap("WindowAgg", "WindowAgg", cost, {});
  }
  if (!plan.sort.empty()) {
    cost = sort_cost(cost);
    wrap("Sort", "Sort", cost, {});
  }
  if (plan.distinct || !plan.distinct_on.empty()) {
    cost.total += cost.rows * kCpuOperatorCost;
    wrap("Unique", "Unique", cost, {});
  }
  if (plan.limit || plan.offset) {
    const double offset = constant_limit(plan.offset).value_or(0);
    const double wanted = constant_limit(plan.limit).value_or(cost.rows);
    const double rows = std::max(0.0, std::min(cost.rows - offset, wanted));
    // PostgreSQL's cost_limit: the fraction of the input's run cost read.
    const double fraction = cost.rows > 0 ? std::min(1.0, (offset + rows) / cost.rows) : 1.0;
    cost.total = cost.startup + (cost.total - cost.startup) * fraction;
    cost.rows = rows;
    wrap("Limit", "Limit", cost, {});
  }
  return node;
}

}  // namespace tally::executor
