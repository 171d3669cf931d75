#include "executor/operators/table_scan.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <numeric>
#include <optional>

#include "common/cancel.hpp"
#include "executor/column_program_compiler.hpp"
#include "executor/cpu/worker_pool.hpp"
#include "executor/database.hpp"
#include "executor/operators/chunk_ops.hpp"
#include "executor/storage_vectors.hpp"
#include "executor/operators/key_chains.hpp"
#include "executor/operators/stored_key_test.hpp"
#include "executor/operators/subquery_restriction.hpp"
#include "executor/plan_expressions.hpp"
#include "executor/read_ahead.hpp"
#include "executor/scan_pieces.hpp"
#include "executor/stored_width.hpp"
#include "executor/select_plan.hpp"
#include "executor/subquery_expr.hpp"
#include "storage/column_layout.hpp"

namespace tally::executor {

namespace {

std::vector<OutputColumn> scan_columns(const TableSnapshot& table, const std::vector<int>& columns) {
  std::vector<OutputColumn> out;
  for (int c : columns) {
    const auto& column = table.columns()[static_cast<size_t>(c)];
    out.push_back({column.name, column.type});
  }
  return out;
}

// The conjuncts of a condition (the arguments of nested ANDs, in order).
void conjuncts(const Expr& condition, std::vector<const Expr*>& out) {
  const auto* and_expr = dynamic_cast<const BoolExpr*>(&condition);
  if (and_expr == nullptr || and_expr->op != BoolOp::and_) {
    out.push_back(&condition);
    return;
  }
  for (const auto& arg : and_expr->args) conjuncts(*arg, out);
}

}  // namespace

bool filter_chunk(DataChunk& chunk, const std::vector<ExprPtr>& conditions, const std::vector<int>& layout,
                  size_t width, const std::vector<Value>* parameters) {
  // A row passes when every conjunct is true: each conjunct is evaluated on
  // the rows the ones before it kept, so a selective first condition spares
  // the rest most of the chunk (and, as PostgreSQL's AND, a later conjunct
  // is not evaluated on a row an earlier one rejected).
  std::vector<const Expr*> parts;
  for (const auto& condition : conditions) conjuncts(*condition, parts);
  for (const Expr* condition : parts) {
    if (chunk.rows == 0) return false;
    const EvalInput input = space_input(chunk, layout, width, parameters);
    const std::vector<uint32_t> rows = true_rows(condition->evaluate(input));
    if (rows.size() == chunk.rows) continue;
    chunk = gather_chunk(chunk, rows);
    if (chunk.columns.empty()) chunk.rows = rows.size();
  }
  return chunk.rows > 0;
}

TableScan::TableScan(std::shared_ptr<const TableSnapshot> table, std::string alias, std::vector<int> table_columns,
                     std::vector<int> layout, size_t space_width, std::vector<ExprPtr> filters, double estimated_rows,
                     size_t outputs)
    : PhysicalOperator(scan_columns(*table, table_columns), estimated_rows),
      table_(std::move(table)),
      alias_(std::move(alias)),
      table_columns_(std::move(table_columns)),
      read_layout_(std::move(layout)),
      outputs_(std::min(outputs, table_columns_.size())),
      space_width_(space_width),
      filters_(std::move(filters)) {
  if (filters_.empty()) outputs_ = table_columns_.size();
  read_columns_ = columns_;
  columns_.resize(outputs_);
  layout_.assign(read_layout_.begin(), read_layout_.begin() + static_cast<long>(outputs_));
  std::vector<const Expr*> parts;
  for (const auto& f : filters_) conjuncts(*f, parts);
  for (const Expr* part : parts) {
    FilterPart fp{part, {}, nullptr};
    fp.subquery = has_subquery(const_cast<Expr&>(*part));
    // collect_refs and has_subquery only read the expression.
    Expr& e = const_cast<Expr&>(*part);
    std::set<int> refs;
    collect_refs(e, refs);
    const bool subquery = has_subquery(e);
    for (size_t i = 0; i < read_layout_.size(); ++i) {
      if (subquery || refs.count(read_layout_[i])) fp.columns.push_back(i);
    }
    if (!subquery && fp.columns.size() == 1 && refs.size() == 1) {
      const size_t i = fp.columns[0];
      fp.dictionary = DictionaryFilter::plan(*part, read_layout_[i], read_columns_[i].type, space_width_);
    }
    if (!subquery && !fp.dictionary) fp.compared = plan_comparisons(*part);
    if (!subquery) {
      if (std::optional<TextEquality> equality = text_equality(*part, read_layout_, read_columns_))
        text_equalities_.push_back(std::move(*equality));
    }
    if (!subquery && !fp.dictionary && !fp.compared) filters_never_raise_ = false;
    filter_parts_.push_back(std::move(fp));
  }
  // Tests on codes go first: they read no text, and drop rows before any
  // other conjunct converts its columns for them.
  std::stable_partition(filter_parts_.begin(), filter_parts_.end(),
                        [](const FilterPart& p) { return p.dictionary != nullptr; });
}

bool TableScan::comparisons_of(const Expr& conjunct, const std::vector<Value>* parameters,
                               std::vector<ColumnComparison>& comparisons, std::vector<size_t>& reads,
                               ColumnProgram* program) const {
  ProgramColumnMap map;
  std::optional<ColumnProgram> compiled = compile_filter(conjunct, map, parameters);
  if (!compiled) return false;
  // The program's columns are space indexes: each must be a read column
  // stored at a width the typed loops take as it is.
  std::vector<ProgramColumn> widths;
  reads.clear();
  for (const int space_index : map.table_columns) {
    const auto at = std::find(read_layout_.begin(), read_layout_.end(), space_index);
    if (at == read_layout_.end()) return false;
    const size_t read = static_cast<size_t>(at - read_layout_.begin());
    const TypeId id = read_columns_[read].type.id;
    if (id == TypeId::int2 || id == TypeId::boolean) return false;  // stored narrower than the loops read
    ProgramColumn c;
    c.width = static_cast<uint8_t>(stored_width(id));
    widths.push_back(c);
    reads.push_back(read);
  }
  if (!comparison_conjunction(*compiled, widths, comparisons)) return false;
  if (program != nullptr) *program = std::move(*compiled);
  return true;
}

namespace {

// Appends `comparisons` (column i is read column reads[i]) to `compared`,
// whose column j is read column compared_columns[j], adding the read
// columns it lacks; returns each of their columns' new number.
std::vector<int32_t> append_comparisons(const std::vector<ColumnComparison>& comparisons,
                                        const std::vector<size_t>& reads, std::vector<ColumnComparison>& compared,
                                        std::vector<size_t>& compared_columns) {
  std::vector<int32_t> numbers;
  for (const size_t read : reads) {
    const auto known = std::find(compared_columns.begin(), compared_columns.end(), read);
    numbers.push_back(static_cast<int32_t>(known - compared_columns.begin()));
    if (known == compared_columns.end()) compared_columns.push_back(read);
  }
  for (ColumnComparison k : comparisons) {
    k.column = numbers[static_cast<size_t>(k.column)];
    if (k.column2 >= 0) k.column2 = numbers[static_cast<size_t>(k.column2)];
    compared.push_back(std::move(k));
  }
  return numbers;
}

}  // namespace

bool TableScan::plan_comparisons(const Expr& conjunct) {
  std::vector<ColumnComparison> comparisons;
  std::vector<size_t> reads;
  std::optional<ColumnProgram> program{ColumnProgram{}};
  if (!comparisons_of(conjunct, nullptr, comparisons, reads, &*program)) {
    // (has_parameter only reads the expression.)
    if (has_parameter(const_cast<Expr&>(conjunct))) parameter_comparisons_.push_back(&conjunct);
    return false;
  }
  // Appended to the scan's list: its columns numbered after those before.
  const std::vector<int32_t> numbers = append_comparisons(comparisons, reads, compared_, compared_columns_);
  // The program over the same numbering, ANDed to the conjuncts' before it.
  const bool first = compared_program_.empty();
  for (ProgramStep step : program->steps) {
    if (step.op == ProgramOp::load) step.arg = numbers[static_cast<size_t>(step.arg)];
    compared_program_.steps.push_back(step);
  }
  if (!first) compared_program_.steps.push_back(ProgramStep{ProgramOp::and_});
  return true;
}

bool TableScan::KeyTestRun::worth_it() const {
  // Tested on a few million rows first; kept while it drops a quarter.
  const uint64_t t = tested.load(std::memory_order_relaxed);
  return t < (uint64_t{4} << 20) || passed.load(std::memory_order_relaxed) * 4 < t * 3;
}

// A chunk's rows that pass the filters. The comparisons with constants go
// first, over the whole chunk's stored values; then each conjunct converts
// only the columns it reads, and only for the rows the conjuncts before it
// kept; the other columns are converted last, for the rows that pass: a
// selective filter spares converting (and copying the texts of) the rows it drops.
DataChunk TableScan::filtered_chunk(const storage::ChunkBatch& batch, size_t begin, size_t end,
                                    const std::vector<Value>* parameters, PartStates& states,
                                    const KeyTestRuns& key_tests, const Selected* selection,
                                    std::vector<uint32_t>* passing) const {
  const size_t n = table_columns_.size();
  DataChunk out;
  out.rows = end - begin;
  for (size_t i = 0; i < n; ++i) out.columns.emplace_back(read_columns_[i].type);
  std::vector<uint8_t> done(n, 0);
  // The stored row of each row of `out` once a conjunct dropped some, or
  // from the start for a slice of the chunk (the slice is never copied: the
  // columns are converted for the rows that pass).
  std::vector<uint32_t> kept;
  bool all = begin == 0 && end == batch.rows;
  if (selection != nullptr) {
    kept = selection->rows;
    all = false;
    out.rows = kept.size();
  } else if (!all) {
    kept.resize(end - begin);
    for (size_t r = begin; r < end; ++r) kept[r - begin] = static_cast<uint32_t>(r);
  }
  auto convert = [&](size_t i) {
    out.columns[i] = all ? vector_from_storage(batch.columns[i], read_columns_[i].type)
                         : vector_from_stored_rows(batch.columns[i], kept, read_columns_[i].type);
    done[i] = 1;
  };
  std::vector<uint32_t> rows;
  // Keeps `rows` of `out`: the converted columns gathered, the others
  // remembered as stored rows (`kept`).
  auto keep_rows = [&] {
    if (rows.size() == out.rows) return;
    for (size_t i = 0; i < n; ++i) {
      if (done[i]) out.columns[i] = gather(out.columns[i], rows);
    }
    if (all) {
      kept = rows;
    } else {
      for (size_t j = 0; j < rows.size(); ++j) kept[j] = kept[rows[j]];
      kept.resize(rows.size());
    }
    all = false;
    out.rows = rows.size();
  };
  if (!compared_.empty() && out.rows > 0 && selection == nullptr) {
    // The typed comparisons, over the whole chunk's stored values.
    std::vector<ProgramColumn> stored;
    for (const size_t i : compared_columns_) {
      const storage::ColumnVector& c = batch.columns[i];
      stored.push_back({c.data.data(), c.has_nulls() ? c.validity.data() : nullptr,
                        static_cast<uint8_t>(stored_width(c.type.id))});
    }
    // (Every byte of [begin, end) is written: no zeroing first.)
    const std::unique_ptr<uint8_t[]> mask(new uint8_t[end]);
    evaluate_comparisons(compared_, stored, begin, end, mask.get());
    rows_of_mask(mask.get(), begin, end, rows);
    keep_rows();
  }
  // The filters without subqueries, the key tests, then the filters with
  // subqueries (FilterPart::subquery).
  bool subquery_parts = false;
  auto test_keys = [&] {
    for (size_t t = 0; t < key_tests.size(); ++t) {
      const auto& key_test = key_tests[t];
      if (selection != nullptr && (*selection->on_device)[t]) continue;
      // Where a subquery follows, every key test applies: its groups may be
      // restricted to the keys a test keeps.
      if (out.rows == 0 || (!subquery_parts && !key_test->worth_it())) continue;
      rows.clear();
      const auto& stored = key_test->stored;
      if (!stored.empty() && std::none_of(stored.begin(), stored.end(), [&](size_t i) { return done[i] != 0; })) {
        std::vector<const storage::ColumnVector*> columns;
        std::vector<SqlType> types;
        for (const size_t i : stored) {
          columns.push_back(&batch.columns[i]);
          types.push_back(read_columns_[i].type);
        }
        test_stored_keys(key_test->test->test, key_test->test->chains, columns, types, all ? nullptr : kept.data(), out.rows, rows);
      } else {
        for (size_t i : key_test->columns) {
          if (!done[i]) convert(i);
        }
        const EvalInput input = space_input(out, read_layout_, space_width_, parameters);
        std::vector<Vector> keys;
        for (const auto& key : *key_test->test->keys) keys.push_back(key->evaluate(input));
        key_test->test->test(keys, out.rows, rows);
      }
      key_test->tested.fetch_add(out.rows, std::memory_order_relaxed);
      key_test->passed.fetch_add(rows.size(), std::memory_order_relaxed);
      keep_rows();
    }
  };
  auto on_device = [&](size_t p) { return selection != nullptr && (*selection->filters_on_device)[p] != 0; };
  for (size_t p = 0; p < filter_parts_.size() && out.rows > 0; ++p) {
    const FilterPart& part = filter_parts_[p];
    if (part.compared || on_device(p)) continue;
    if (part.subquery) {
      subquery_parts = true;
      continue;
    }
    const bool on_codes = part.dictionary && !done[part.columns[0]] &&
                          part.dictionary->select(batch.columns[part.columns[0]], all ? nullptr : &kept, out.rows,
                                                  parameters, *states[p].dictionary, rows);
    const bool on_stored = !on_codes && states[p].program &&
                           states[p].program->select(batch, begin, end, all ? nullptr : &kept, out.rows, rows);
    if (!on_codes && !on_stored) {
      for (size_t i : part.columns) {
        if (!done[i]) convert(i);
      }
      const EvalInput input = space_input(out, read_layout_, space_width_, parameters);
      rows = true_rows(part.condition->evaluate(input));
    }
    keep_rows();
  }
  test_keys();
  for (size_t p = 0; p < filter_parts_.size() && out.rows > 0 && subquery_parts; ++p) {
    const FilterPart& part = filter_parts_[p];
    if (!part.subquery || on_device(p)) continue;
    for (size_t i : part.columns) {
      if (!done[i]) convert(i);
    }
    const EvalInput input = space_input(out, read_layout_, space_width_, parameters);
    rows = true_rows(part.condition->evaluate(input));
    keep_rows();
  }
  if (passing != nullptr) {
    passing->clear();
    if (out.rows == 0) return out;
    if (all) {
      passing->resize(out.rows);
      std::iota(passing->begin(), passing->end(), static_cast<uint32_t>(begin));
    } else {
      *passing = std::move(kept);
    }
    return out;
  }
  for (size_t i = 0; i < outputs_ && out.rows > 0; ++i) {
    if (!done[i]) convert(i);
  }
  out.columns.resize(outputs_);
  return out;
}

void TableScan::run(ExecContext& context, ChunkSink& sink) const { run(context, sink, nullptr); }

TableScan::PartStates TableScan::part_states(const std::vector<Value>* parameters) const {
  PartStates states;
  std::vector<ProgramFilter::Read> reads;
  for (size_t i = 0; i < read_layout_.size(); ++i) reads.push_back({read_layout_[i], i, read_columns_[i].type});
  const auto dictionary_of = [this](size_t read) { return table_->dictionary(table_columns_[read]); };
  const int threads = static_cast<int>(cpu::WorkerPool::shared().workers()) + 1;
  // Whether the rows repeat a dictionary's texts, four rows an entry or
  // more: where a test per entry costs less than one per row.
  const uint64_t rows = table_->row_count();
  const auto repeats = [rows](const storage::StringDictionary& dictionary) {
    return static_cast<uint64_t>(dictionary.size()) * 4 <= rows;
  };
  // A program evaluates its text conditions once per dictionary entry: only
  // where every text it reads repeats, else a selective query over a column
  // of millions of distinct texts would test them all for the few rows its
  // other conjuncts keep.
  const auto repeated_texts = [&](const FilterPart& part) {
    for (const size_t read : part.columns) {
      const auto dictionary = dictionary_of(read);
      if (dictionary && !repeats(*dictionary)) return false;
    }
    return true;
  };
  for (const FilterPart& part : filter_parts_) {
    PartState& state = states.emplace_back();
    state.dictionary = std::make_unique<DictionaryFilter::State>();
    if (!part.subquery && !part.dictionary && !part.compared && repeated_texts(part)) {
      state.program = ProgramFilter::compile(*part.condition, reads, dictionary_of, parameters, threads);
    }
    // A test per entry where the rows repeat their texts, where an earlier
    // statement's tests per entry are kept, or where the entries are no
    // more than the rows and their tests will be kept (a LIKE over names
    // of parts, most of them distinct: the first statement tests about as
    // many entries as it would rows, on every core, and the statements
    // after it look them up).
    const auto dictionary = part.dictionary ? table_->dictionary(table_columns_[part.columns[0]]) : nullptr;
    if (dictionary && (repeats(*dictionary) || part.dictionary->verdicts_kept(*dictionary) ||
                       (static_cast<uint64_t>(dictionary->size()) <= rows && part.dictionary->verdicts_keepable()))) {
      part.dictionary->prepare(dictionary, parameters, *state.dictionary);
    }
  }
  return states;
}

std::shared_ptr<TableScan::FilterRun> TableScan::start_filtering(const std::vector<Value>* parameters) const {
  auto run = std::make_shared<FilterRun>();
  run->states = part_states(parameters);
  return run;
}

DataChunk TableScan::filter_rows(const storage::ChunkBatch& batch, size_t begin, size_t end,
                                 const std::vector<Value>* parameters, FilterRun& run) const {
  return filtered_chunk(batch, begin, end, parameters, run.states, run.no_key_tests);
}

std::vector<uint32_t> TableScan::passing_rows(const storage::ChunkBatch& batch, size_t begin, size_t end,
                                              const std::vector<Value>* parameters, FilterRun& run) const {
  std::vector<uint32_t> rows;
  filtered_chunk(batch, begin, end, parameters, run.states, run.no_key_tests, nullptr, &rows);
  return rows;
}

std::optional<TableScan::TextEquality> TableScan::text_equality(const Expr& conjunct, const std::vector<int>& layout,
                                                                const std::vector<OutputColumn>& columns) {
  const std::optional<TextEqualityShape> shape = text_equality_shape(conjunct);
  if (!shape || shape->negated) return std::nullopt;
  const ColumnExpr* column = shape->column;
  const std::vector<const Expr*>& constants = shape->values;
  const auto at = std::find(layout.begin(), layout.end(), column->index);
  if (at == layout.end()) return std::nullopt;
  TextEquality equality{static_cast<size_t>(at - layout.begin()), {}};
  if (columns[equality.read].type.id != column->type.id) return std::nullopt;
  for (const Expr* e : constants) {
    const auto* constant = dynamic_cast<const ConstExpr*>(e);
    if (constant == nullptr) return std::nullopt;
    if (is_null(constant->value)) continue;  // equal to no row
    const auto* text = std::get_if<std::string>(&constant->value);
    if (text == nullptr) return std::nullopt;
    equality.values.push_back(*text);
  }
  return equality;
}

std::vector<uint8_t> TableScan::skipped_chunks(const std::vector<Value>* parameters) const {
  // The comparisons with constants, and those with the run's parameters,
  // over their read columns.
  std::vector<ColumnComparison> compared = compared_;
  std::vector<size_t> compared_columns = compared_columns_;
  for (const Expr* conjunct : parameter_comparisons_) {
    std::vector<ColumnComparison> comparisons;
    std::vector<size_t> reads;
    if (parameters == nullptr || !comparisons_of(*conjunct, parameters, comparisons, reads)) continue;
    append_comparisons(comparisons, reads, compared, compared_columns);
  }
  if (compared.empty() && text_equalities_.empty()) return {};
  const size_t chunks = table_->chunk_count();
  // Each text equality's codes, ascending; a text the dictionary lacks is in
  // no row. A table without dictionaries (in memory) skips nothing by them.
  std::vector<std::vector<int64_t>> codes;
  std::vector<int> code_columns;
  for (const TextEquality& equality : text_equalities_) {
    const int column = table_columns_[equality.read];
    const auto dictionary = table_->dictionary(column);
    if (!dictionary) continue;
    std::vector<int64_t>& found = codes.emplace_back();
    for (const std::string& value : equality.values) {
      const int32_t code = dictionary->find(value);
      if (code >= 0) found.push_back(code);
    }
    std::sort(found.begin(), found.end());
    code_columns.push_back(column);
  }
  std::vector<uint8_t> skipped(chunks, 0);
  std::vector<ValueRange> ranges(compared_columns.size());
  bool any = false;
  for (size_t c = 0; c < chunks; ++c) {
    for (size_t i = 0; i < compared_columns.size(); ++i) {
      const int column = table_columns_[compared_columns[i]];
      const ChunkColumnStats stats = table_->stats(c, column);
      // A float column's `known` range is that of one holding only NULLs.
      ranges[i] = ValueRange{stats.known, stats.min, stats.max};
    }
    bool may_pass = compared.empty() || comparisons_may_pass(compared, ranges);
    for (size_t e = 0; e < codes.size() && may_pass; ++e) {
      const ChunkColumnStats stats = table_->stats(c, code_columns[e]);
      if (!stats.known) continue;
      const auto at = std::lower_bound(codes[e].begin(), codes[e].end(), stats.min);
      may_pass = at != codes[e].end() && *at <= stats.max;
    }
    skipped[c] = may_pass ? 0 : 1;
    any = any || skipped[c] != 0;
  }
  if (!any) skipped.clear();
  return skipped;
}

bool TableScan::filters_never_raise() const {
  return filters_never_raise_ &&
         std::none_of(filter_parts_.begin(), filter_parts_.end(), [](const FilterPart& p) { return p.subquery; });
}

std::string TableScan::skipped_line(const std::vector<uint8_t>& skipped) {
  const auto n = std::count(skipped.begin(), skipped.end(), uint8_t{1});
  if (n == 0) return "";
  return std::to_string(n) + " of " + std::to_string(skipped.size()) + " chunks skipped by their min/max";
}

void TableScan::run(ExecContext& context, ChunkSink& sink, const KeyTest* key_test) const {
  // Each chunk is read, converted, filtered and prepared by the sink
  // (ChunkSink::prepare) ahead of the sink on the worker pool
  // (read_ahead.hpp); the sink takes them in chunk order.
  const size_t chunks = table_->chunk_count();
  const std::vector<Value>* parameters = context.parameters;
  // A conjunct NULL on every row (a decorrelated subquery's value over no
  // rows, run with NULL outer values) passes none: nothing is read.
  for (const FilterPart& part : filter_parts_) {
    if (null_on_every_row(*part.condition, parameters)) return;
  }
  // The key tests whose keys read only this scan's columns.
  KeyTestRuns test_runs;
  auto add_test = [&](const KeyTest* test) {
    std::set<int> refs;
    for (const auto& key : *test->keys) collect_refs(*key, refs);
    auto run = std::make_unique<KeyTestRun>();
    run->test = test;
    for (size_t i = 0; i < read_layout_.size(); ++i) {
      if (refs.erase(read_layout_[i]) > 0) run->columns.push_back(i);
    }
    for (const auto& key : *test->keys) {
      const ColumnExpr* column = stored_integer_key(*key);
      const auto at = column ? std::find(read_layout_.begin(), read_layout_.end(), column->index) : read_layout_.end();
      if (at == read_layout_.end() || read_columns_[static_cast<size_t>(at - read_layout_.begin())].type.id != key->type.id) {
        run->stored.clear();
        break;
      }
      run->stored.push_back(static_cast<size_t>(at - read_layout_.begin()));
    }
    if (refs.empty()) test_runs.push_back(std::move(run));
  };
  if (key_test != nullptr) add_test(key_test);
  for (const KeyTest* test : context.key_tests) add_test(test);
  const KeyTestRuns& tests = test_runs;
  if (chunks > 0) {
    restrict_by_in_lists(filters_, parameters);
    for (const auto& f : filters_) run_subqueries_ahead(*f, parameters);
  }
  // After the subqueries: one that evaluates a condition of this filter per
  // entry (TPC-H Q22's) leaves the verdicts kept for it.
  PartStates states = part_states(parameters);
  const size_t depth = ReadAhead<DataChunk>::default_depth();
  // Pieces small enough to keep every core busy to the end of the scan: a
  // table of fewer chunks than four times the read-ahead's depth (the
  // dimension tables of a star join, a small table's filter, TPC-H's
  // lineitem at 60 chunks on 16 cores) is read in slices, so that the last
  // wave of pieces is short.
  constexpr size_t kPiecesPerWorker = 4;
  const std::vector<uint8_t> skipped = skipped_chunks(parameters);
  if (context.explain != nullptr && !skipped.empty()) context.explain->push_back(describe() + ": " + skipped_line(skipped));
  const std::vector<ScanPiece> pieces = scan_pieces(*table_, depth * kPiecesPerWorker, skipped);
  ChunkReads reads(pieces, chunks, [this](size_t chunk) { return table_->read_chunk(chunk, table_columns_); });
  std::vector<uint8_t> on_device, filters_on_device;
  std::vector<size_t> program_reads;
  std::string not_selected;
  const std::unique_ptr<ScanSelectionRun> selection =
      !pieces.empty() && !table_columns_.empty()
          ? start_selection(context, states, tests, on_device, program_reads, filters_on_device, not_selected)
          : nullptr;
  if (context.explain != nullptr && !not_selected.empty())
    context.explain->push_back(describe() + ": not selected on GPU: " + not_selected);
  const auto* engine_table = dynamic_cast<const EngineTableSnapshot*>(table_.get());
  // Rows the engine selected from, and how many passed: a selection that
  // keeps most rows only makes the host gather them one by one, so after
  // a few million rows it stops where it keeps over three quarters.
  std::atomic<uint64_t> selection_rows{0}, selection_passed{0};
  // The piece's rows the engine selected; false where it selected none.
  auto select_piece = [&](const ScanPiece& piece, const storage::ChunkBatch& batch, Selected& out) {
    const uint64_t tested = selection_rows.load(std::memory_order_relaxed);
    if (tested >= (uint64_t{4} << 20) && selection_passed.load(std::memory_order_relaxed) * 4 >= tested * 3) return false;
    const std::optional<uint64_t> chunk_id = engine_table->chunk_id(piece.chunk);
    if (!chunk_id) return false;
    SelectionPiece p;
    p.chunk = *chunk_id;
    p.rows = batch.rows;
    p.begin = piece.begin;
    p.end = piece.end;
    for (const size_t read : program_reads) {
      const storage::ColumnVector& c = batch.columns[read];
      p.host.push_back({c.data.data(), c.has_nulls() ? c.validity.data() : nullptr});
    }
    if (!selection->select(p, out.rows)) return false;
    selection_rows.fetch_add(piece.end - piece.begin, std::memory_order_relaxed);
    selection_passed.fetch_add(out.rows.size(), std::memory_order_relaxed);
    out.on_device = &on_device;
    out.filters_on_device = &filters_on_device;
    return true;
  };
  auto read_piece = [this, parameters, &states, &tests, &reads, &selection, &select_piece](const ScanPiece& piece) {
    if ((!filters_.empty() || !tests.empty()) && !table_columns_.empty()) {
      // The slice is not copied: the filters convert the rows that pass.
      const std::shared_ptr<const storage::ChunkBatch> batch = reads.batch(piece);
      Selected selected;
      const bool on_engine = selection && select_piece(piece, *batch, selected);
      return filtered_chunk(*batch, piece.begin, piece.end, parameters, states, tests, on_engine ? &selected : nullptr);
    }
    const std::shared_ptr<const storage::ChunkBatch> rows = reads.rows(piece);
    const storage::ChunkBatch& batch = *rows;
    DataChunk out;
    out.rows = batch.rows;
    for (size_t i = 0; i < table_columns_.size(); ++i) {
      out.columns.push_back(vector_from_storage(batch.columns[i], columns_[i].type));
    }
    if (table_columns_.empty()) {
      // No column is read (count(*)): the rows still count.
      out.rows = piece.end - piece.begin;
    }
    if (!filters_.empty() && !filter_chunk(out, filters_, layout_, space_width_, parameters)) out.rows = 0;
    return out;
  };
  auto scan_piece = [&read_piece, &sink](const ScanPiece& piece) {
    DataChunk out = read_piece(piece);
    if (out.rows > 0) sink.prepare(out);
    return out;
  };
  ReadAhead<DataChunk> ahead(
      depth, pieces.size(),
      [&scan_piece, &pieces](size_t p) { return [&scan_piece, &pieces, p] { return scan_piece(pieces[p]); }; },
      context.scans_may_stop);
  // EXPLAIN ANALYZE's lines about the engine's selection, once every piece is in.
  struct ReportSelection {
    const ScanSelectionRun* run;
    std::vector<std::string>* explain;
    std::string scan;
    ~ReportSelection() {
      if (run == nullptr || explain == nullptr) return;
      for (const std::string& line : run->report()) explain->push_back(scan + ": " + line);
    }
  } report{selection.get(), context.explain, describe()};
  for (size_t p = 0; p < pieces.size(); ++p) {
    if (context.cancel) context.cancel->check();
    DataChunk out = ahead.take();
    if (out.rows == 0) continue;
    if (!sink.consume_prepared(out)) return;
  }
}

std::string TableScan::describe() const {
  std::string line = "Seq Scan on " + table_->name();
  if (alias_ != table_->name()) line += " " + alias_;
  return line;
}

std::vector<std::pair<std::string, std::string>> TableScan::node_properties() const {
  return {{"Relation Name", table_->name()}, {"Alias", alias_}};
}

std::vector<std::string> TableScan::details() const {
  std::string read = "Columns read: " + std::to_string(table_columns_.size()) + " of " +
                     std::to_string(table_->columns().size());
  if (outputs_ < table_columns_.size()) read += " (" + std::to_string(table_columns_.size() - outputs_) + " for the filter only)";
  std::vector<std::string> lines{read};
  if (!filters_.empty()) {
    const auto compared = std::count_if(filter_parts_.begin(), filter_parts_.end(), [](const FilterPart& p) { return p.compared; });
    std::string line = "Filter: " + std::to_string(filters_.size()) + " condition(s)";
    if (compared > 0) line += ", " + std::to_string(compared) + " of its conjuncts tested on stored values";
    lines.push_back(line);
  }
  return lines;
}

FilterOperator::FilterOperator(std::unique_ptr<PhysicalOperator> child, std::vector<ExprPtr> conditions,
                               size_t space_width)
    : PhysicalOperator(child->columns(), child->estimated_rows() * 0.5),
      conditions_(std::move(conditions)),
      space_width_(space_width) {
  layout_ = child->layout();
  children_.push_back(std::move(child));
}

void FilterOperator::run(ExecContext& context, ChunkSink& sink) const {
  struct Passing final : PreparingSink {
    const FilterOperator& self;
    ExecContext& context;
    ChunkSink& next;
    Passing(const FilterOperator& s, ExecContext& c, ChunkSink& n) : self(s), context(c), next(n) {}
    void prepare(DataChunk& chunk) const override {
      if (!filter_chunk(chunk, self.conditions_, self.layout_, self.space_width_, context.parameters)) chunk.rows = 0;
      if (chunk.rows > 0) next.prepare(chunk);
    }
    bool consume_prepared(DataChunk& chunk) override { return next.consume_prepared(chunk); }
  } passing(*this, context, sink);
  for (const auto& c : conditions_) run_subqueries_ahead(*c, context.parameters);
  run_operator(*children_[0], context, passing);
}

}  // namespace tally::executor

