#pragma once
// A scan filter conjunct that reads one text column, tested on the column's
// dictionary codes. Text is stored as codes into the column's dictionary
// (storage/string_dictionary.hpp); converting a chunk's codes to strings to
// compare them copies every row's text (TPC-H's l_shipmode IN (...),
// p_brand = ..., l_shipinstruct = ...). Where a column has few distinct
// values, the conjunct is instead evaluated once per dictionary entry, and a
// row passes when its code's verdict is true.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "executor/expression.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

class DictionaryFilter {
 public:
  // The verdicts one run of a scan has computed: a scan's chunks share one
  // column store (dictionaries are prefixes of one another), so an entry is
  // evaluated once per run, whichever chunk needs it first.
  class State {
   public:
    State() = default;

   private:
    friend class DictionaryFilter;
    std::mutex mutex_;
    // Per code, 1 = true. Replaced, never changed, when entries are added,
    // so a chunk reads the copy it took while another chunk extends it.
    std::shared_ptr<const std::vector<uint8_t>> verdicts_;
    uint8_t null_verdict_ = 0;
    bool failed_ = false;  // an entry raised an error: rows take the ordinary path
  };

  // The filter for `conjunct` when it may be evaluated per distinct value:
  // it reads only the text column at `space_index` (of type `type`), holds no
  // subquery and calls nothing volatile; otherwise nullptr.
  static std::unique_ptr<DictionaryFilter> plan(const Expr& conjunct, int space_index, SqlType type,
                                                size_t space_width);

  // The positions j in [0, rows) of the candidate rows (stored row `kept[j]`,
  // or j itself when `kept` is null) whose value passes. False, leaving
  // `passing` unspecified, where the ordinary path must run instead (no
  // dictionary, or an entry raised an error: the error belongs to the rows
  // that hold it, which the ordinary path raises).
  bool select(const storage::ColumnVector& column, const std::vector<uint32_t>* kept, size_t rows,
              const std::vector<Value>* parameters, State& state, std::vector<uint32_t>& passing) const;

  // Evaluates every entry of `dictionary` (the table's, before its scan
  // starts: the whole worker pool evaluates them, where a chunk's first
  // test would hold the other chunks waiting), up to the most entries any
  // condition is evaluated for (dictionary_entry_values.hpp).
  void prepare(const std::shared_ptr<const storage::StringDictionary>& dictionary,
               const std::vector<Value>* parameters, State& state) const;
  // Whether an earlier statement's evaluation of the condition over
  // `dictionary`'s entries is kept (dictionary_entry_values.hpp): then
  // prepare() costs no evaluation, however few rows each entry has.
  bool verdicts_kept(const storage::StringDictionary& dictionary) const;
  // Whether verdicts prepare() makes are kept for later statements.
  bool verdicts_keepable() const;

 private:
  DictionaryFilter(const Expr& conjunct, int space_index, SqlType type, size_t space_width)
      : conjunct_(conjunct), space_index_(space_index), type_(type), space_width_(space_width) {}
  // Evaluates the entries the state lacks (under its mutex).
  bool extend(const std::shared_ptr<const storage::StringDictionary>& dictionary,
              const std::vector<Value>* parameters, State& state) const;

  const Expr& conjunct_;
  int space_index_;
  SqlType type_;
  size_t space_width_;
};

}  // namespace tally::executor
