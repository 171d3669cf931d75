#pragma once
// An expression over one stored text column and constants, evaluated once
// for each entry of the column's dictionary rather than once per row. A
// column of twenty million rows holds a few million distinct URLs: a
// condition on them, their lengths or a regular expression's rewrite of
// them is then computed a few million times, on every core, and the engines
// (the GPU over its resident codes) look each row's result up by its code
// (a lookup column, column_program.hpp).
//
// Each function evaluates `e`, whose only column is `column` (coded in
// `dictionary`), on up to `threads` threads, and returns nullopt where the
// evaluation raised an error (the rows that hold the entry raise it on the
// host path, as PostgreSQL does) or, for a lookup, where a NULL value would
// not give NULL (the lookup of a NULL code gives NULL). The results of
// expressions that depend on their input alone are kept for the statements
// after (entry_result_cache.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/column_program.hpp"
#include "executor/expression.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {

// Dictionaries of more entries than this are not evaluated entry by entry:
// a scan that keeps few rows would pay for every entry.
constexpr int32_t kMostEvaluatedEntries = int32_t{1} << 22;

struct EntryLookup {
  ProgramColumn column;                                   // by code, dictionary->size() entries
  std::vector<std::shared_ptr<const void>> arrays;        // what `column` points into
  std::shared_ptr<const storage::StringDictionary> codes;  // text results: the dictionary they are coded in
};

// A condition: int32 1 where the entry passes, 0 where not. Also nullopt
// where an entry gives NULL.
std::optional<EntryLookup> entry_verdicts(const Expr& e, const ColumnExpr& column,
                                          const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                          const std::vector<Value>* parameters, int threads);

// A scan filter's verdicts on the entries [from, n) and then on NULL (n =
// dictionary->size()): 1 where the condition is true, 0 where it is false
// or NULL. Only nullopt where an entry raised an error. entry_verdicts and
// entry_passes (from 0) evaluate a condition once for both.
std::optional<std::vector<uint8_t>> entry_passes(const Expr& e, const ColumnExpr& column,
                                                 const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                                 const std::vector<Value>* parameters, int threads, size_t from);

// Whether a condition's values on every entry of `dictionary` are kept from
// an earlier statement (entry_result_cache.hpp): then its verdicts cost no
// evaluation, whatever the rows per entry.
bool entry_conditions_kept(const Expr& e, const ColumnExpr& column, const storage::StringDictionary& dictionary);
// Those kept values, one per entry and then NULL's (0 false, 1 true, 2
// NULL), without evaluating anything; null where none are kept.
std::shared_ptr<const std::vector<uint8_t>> kept_entry_truths(const Expr& e, const ColumnExpr& column,
                                                              const storage::StringDictionary& dictionary);
// Whether an evaluation of the condition over a dictionary's entries would
// be kept for the statements after this one.
bool entry_conditions_keepable(const Expr& e, const ColumnExpr& column);

// An integer (int64) or float8 (float64) value, NULL where an entry gives NULL.
std::optional<EntryLookup> entry_values(const Expr& e, const ColumnExpr& column,
                                        const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                        const std::vector<Value>* parameters, int threads);

// A text value: each entry's result coded (int32) in a dictionary of the
// distinct results (`codes`), NULL where an entry gives NULL.
std::optional<EntryLookup> entry_text_codes(const Expr& e, const ColumnExpr& column,
                                            const std::shared_ptr<const storage::StringDictionary>& dictionary,
                                            const std::vector<Value>* parameters, int threads);

}  // namespace tally::executor
