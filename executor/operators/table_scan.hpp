#pragma once
// Seq Scan: reads a table snapshot chunk by chunk, only the columns the query
// needs, applies the filter conjuncts that touch only this table and pushes
// the selected rows.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/column_program_comparisons.hpp"
#include "common/scan_selection.hpp"
#include "executor/operators/dictionary_filter.hpp"
#include "executor/operators/key_test.hpp"
#include "executor/operators/program_filter.hpp"
#include "executor/operators/physical_operator.hpp"
#include "executor/table_provider.hpp"

namespace tally::executor {

class TableScan final : public PhysicalOperator {
 public:
  // `table_columns`: table column numbers read, the first `outputs` of them
  // (all by default) output in that order, the rest read for the filters
  // only; `layout`: their column-space indexes; `filters` (conjuncts) is
  // bound against a space of `space_width` columns.
  TableScan(std::shared_ptr<const TableSnapshot> table, std::string alias, std::vector<int> table_columns,
            std::vector<int> layout, size_t space_width, std::vector<ExprPtr> filters, double estimated_rows,
            size_t outputs = SIZE_MAX);
  void run(ExecContext& context, ChunkSink& sink) const override;
  // With `key_test` (may be null) first, then the applicable ones of
  // ExecContext::key_tests (key_test.hpp).
  void run(ExecContext& context, ChunkSink& sink, const KeyTest* key_test) const;
  std::string describe() const override;
  std::vector<std::string> details() const override;
  std::string node_type() const override { return "Seq Scan"; }
  // The conjuncts the scan filters its rows by.
  const std::vector<ExprPtr>& filters() const { return filters_; }
  const std::shared_ptr<const TableSnapshot>& table() const { return table_; }
  const std::string& alias() const { return alias_; }
  // The table columns read (outputs first) and their column-space indexes.
  const std::vector<int>& table_columns() const { return table_columns_; }
  const std::vector<int>& read_layout() const { return read_layout_; }
  std::vector<std::pair<std::string, std::string>> node_properties() const override;
  // The filters applied outside run(), by the direct scan path of one stored
  // table (select_run.cpp): a run's state (start_filtering, one per
  // statement, shared by its threads), and the rows [begin, end) of a stored
  // chunk that pass, with every read column converted for them.
  struct FilterRun;
  std::shared_ptr<FilterRun> start_filtering(const std::vector<Value>* parameters) const;
  DataChunk filter_rows(const storage::ChunkBatch& batch, size_t begin, size_t end,
                        const std::vector<Value>* parameters, FilterRun& run) const;
  // The same rows as chunk row numbers (ascending), without converting any
  // column but those a conjunct reads.
  std::vector<uint32_t> passing_rows(const storage::ChunkBatch& batch, size_t begin, size_t end,
                                     const std::vector<Value>* parameters, FilterRun& run) const;
  // One flag per chunk of the table: 1 where the chunk's statistics (its
  // columns' min and max) leave no row that passes the comparisons of
  // stored integer columns with constants, or the equalities of a stored
  // text column with constants (on the dictionary codes of those texts),
  // so the chunk need not be read. Empty where no chunk is skipped. A
  // conjunct that compares with a parameter (`x < $1`, as a prepared
  // statement's shared plan holds it) is compiled here with `parameters`.
  std::vector<uint8_t> skipped_chunks(const std::vector<Value>* parameters) const;
  // EXPLAIN ANALYZE's line about them ("" where none is skipped).
  static std::string skipped_line(const std::vector<uint8_t>& skipped);
  // Whether no row can make the filters raise an error: every conjunct is a
  // comparison on stored values or a test on dictionary codes.
  bool filters_never_raise() const;

 private:
  std::shared_ptr<const TableSnapshot> table_;
  std::string alias_;
  std::vector<int> table_columns_;
  std::vector<int> read_layout_;  // of every column read; layout() has the output ones
  std::vector<OutputColumn> read_columns_;
  size_t outputs_;
  size_t space_width_;
  std::vector<ExprPtr> filters_;
  // The filters' conjuncts in test order, each with the positions of the
  // columns it reads (every column where it holds a subquery), and, for one
  // that reads a single text column, its test on dictionary codes.
  struct FilterPart {
    const Expr* condition;
    std::vector<size_t> columns;
    std::unique_ptr<DictionaryFilter> dictionary;
    bool compared = false;  // one of compared_ below
    // Holds a subquery: tested after the key tests, so that a grouped
    // subquery restricted to a join's keys (subquery_restriction.hpp) is
    // looked up only for rows the join keeps.
    bool subquery = false;
  };
  std::vector<FilterPart> filter_parts_;
  // The conjuncts that are comparisons of a stored integer, numeric or
  // float column with a constant (common/column_program_comparisons.hpp):
  // tested as typed loops over the stored values of the whole chunk, before
  // any column is converted. compared_columns_[i] is the read column of
  // the comparisons' column i.
  std::vector<ColumnComparison> compared_;
  std::vector<size_t> compared_columns_;
  // The same comparisons as one boolean program over compared_columns_
  // (their AND), for an engine that selects rows itself (scan_selection.hpp).
  ColumnProgram compared_program_;
  // The conjuncts `column = 'text'` and `column IN ('a', 'b', ...)` over a
  // stored text or varchar column (read column `read`): a chunk whose codes'
  // range holds none of those texts' codes has no row that passes.
  struct TextEquality {
    size_t read = 0;
    std::vector<std::string> values;
  };
  std::vector<TextEquality> text_equalities_;
  static std::optional<TextEquality> text_equality(const Expr& conjunct, const std::vector<int>& layout,
                                                   const std::vector<OutputColumn>& columns);
  // Whether every conjunct without a subquery is a comparison or a test on
  // dictionary codes: none can raise an error, so the key tests may run
  // before them (on the device) without skipping an error PostgreSQL raises.
  bool filters_never_raise_ = true;
  // One per filter part, for one run: a test on dictionary codes' verdicts,
  // or the program of a conjunct that is neither such a test nor
  // comparisons (program_filter.hpp).
  struct PartState {
    std::unique_ptr<DictionaryFilter::State> dictionary;
    std::unique_ptr<const ProgramFilter> program;
  };
  using PartStates = std::vector<PartState>;
  // A run's states, each test on dictionary codes given its verdicts on the
  // table's dictionary, and each other conjunct compiled where it can be,
  // before the run's chunks are read.
  PartStates part_states(const std::vector<Value>* parameters) const;
  // A run's key test: the read columns its keys read, and how many rows it
  // has tested and passed (a test that passes nearly every row is dropped).
  struct KeyTestRun {
    const KeyTest* test = nullptr;
    std::vector<size_t> columns;
    // Per key, its read column where the test runs on stored values
    // (stored_key_test.hpp); empty where it runs on converted ones.
    std::vector<size_t> stored;
    std::atomic<uint64_t> tested{0}, passed{0};
    bool worth_it() const;
  };
  using KeyTestRuns = std::vector<std::unique_ptr<KeyTestRun>>;
  // Adds `conjunct` to compared_ when it is such comparisons; false otherwise.
  bool plan_comparisons(const Expr& conjunct);
  // The comparisons `conjunct` is, with `parameters` bound, each column
  // numbered as its read column; false where it is not such comparisons.
  bool comparisons_of(const Expr& conjunct, const std::vector<Value>* parameters,
                      std::vector<ColumnComparison>& comparisons, std::vector<size_t>& reads,
                      ColumnProgram* program = nullptr) const;
  // The conjuncts that compare a column with a parameter: compiled per run
  // for skipped_chunks (the filter tests them on converted rows).
  std::vector<const Expr*> parameter_comparisons_;
  // The rows of a piece an engine selected (start_selection): they passed
  // the comparisons and the key tests `on_device` marks.
  struct Selected {
    std::vector<uint32_t> rows;      // chunk row numbers, ascending
    const std::vector<uint8_t>* on_device = nullptr;  // per key test run, shared by the pieces
    const std::vector<uint8_t>* filters_on_device = nullptr;  // per filter part: applied by the engine
  };
  // Rows [begin, end) of a stored chunk, filtered and tested, with the
  // output columns converted for the rows that pass; with `selection`, of
  // the rows the engine selected among them. With `passing`, the rows that
  // pass go there as chunk row numbers instead, and no output is converted.
  DataChunk filtered_chunk(const storage::ChunkBatch& batch, size_t begin, size_t end,
                           const std::vector<Value>* parameters, PartStates& states,
                           const KeyTestRuns& key_tests, const Selected* selection = nullptr,
                           std::vector<uint32_t>* passing = nullptr) const;
  // The row selection of an engine that keeps copies of the columns (the
  // GPU), where one is there and the scan's comparisons or key tests have
  // something for it; null otherwise. `on_device` marks the key test runs
  // it applies, `filters_on_device` the filter parts (IN subqueries, and
  // the conjuncts `states` compiled as programs); program column i of its
  // spec is read column program_reads[i].
  // Where an engine is there and the table is large enough but the scan
  // gives it nothing, `why_not` says why (EXPLAIN ANALYZE's line).
  std::unique_ptr<ScanSelectionRun> start_selection(const ExecContext& context, const PartStates& states,
                                                   const KeyTestRuns& tests, std::vector<uint8_t>& on_device,
                                                   std::vector<size_t>& program_reads, std::vector<uint8_t>& filters_on_device,
                                                   std::string& why_not) const;
};

struct TableScan::FilterRun {
  PartStates states;
  KeyTestRuns no_key_tests;
};

// Filter: pushes the rows of its child for which the condition is true.
class FilterOperator final : public PhysicalOperator {
 public:
  FilterOperator(std::unique_ptr<PhysicalOperator> child, std::vector<ExprPtr> conditions, size_t space_width);
  void run(ExecContext& context, ChunkSink& sink) const override;
  std::string describe() const override { return "Filter"; }
  const std::vector<ExprPtr>& conditions() const { return conditions_; }

 private:
  std::vector<ExprPtr> conditions_;
  size_t space_width_;
};

// Keeps only the rows of a chunk for which every condition (bound against a
// space of `width` columns, the chunk laid out by `layout`) is true, testing
// each condition only on the rows the ones before it kept (so a subquery
// listed last runs for few rows); true when any row is left.
bool filter_chunk(DataChunk& chunk, const std::vector<ExprPtr>& conditions, const std::vector<int>& layout,
                  size_t width, const std::vector<Value>* parameters);

}  // namespace tally::executor
