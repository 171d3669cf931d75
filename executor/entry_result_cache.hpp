#pragma once
// Results of an expression over a text column's dictionary entries
// (dictionary_entry_values.hpp), kept from one statement to the next.
//
// A dictionary's entries never change once written (string_dictionary.hpp),
// so an expression whose value depends on its input alone gives each entry
// the same result in every statement: a dashboard's `substring(c_phone, 1,
// 2) IN (...)` or `regexp_replace(Referer, ...)` over millions of distinct
// values is evaluated once, and the statements after it (and the second
// occurrence of it in one statement, TPC-H Q22's) look the results up.
//
// Only expressions built from constants, the one column and functions known
// to depend on their arguments alone are kept: catalog lookups
// (`::regclass`), settings (`current_setting`) and volatile functions are
// evaluated anew each time. The session's time zone, bytea output and date
// order, which casts read (types/thread_settings.hpp), are part of the key. A result is for one dictionary size: a
// column that grows evaluates again. Kept results are bounded in bytes,
// the least recently used dropped first.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "executor/dictionary_entry_values.hpp"

namespace tally::executor {

// What dictionary_entry_values computes for an expression: one of these.
// conditions: each entry's and NULL's truth value (false, true, NULL), which
// a scan filter's and a program's verdicts are both made from.
enum class EntryResultKind : uint8_t { conditions, values, text_codes };

struct EntryResult {
  std::optional<EntryLookup> lookup;  // values, text_codes
  std::vector<uint8_t> truths;        // conditions
  size_t bytes() const;
};

// The result of `kind` for `e` over `dictionary`'s entries: the kept one,
// else compute()'s, kept where it is not nullopt (an evaluation that raised
// an error is not kept: the next statement raises it again on its rows).
// Null where compute() gave nullopt.
std::shared_ptr<const EntryResult> cached_entry_result(EntryResultKind kind, const Expr& e, const ColumnExpr& column,
                                               const storage::StringDictionary& dictionary,
                                               const std::function<std::optional<EntryResult>()>& compute);

// Whether results for `e` may be kept at all: it is built from constants,
// `column` and functions that depend on their arguments alone.
bool entry_result_keepable(const Expr& e, const ColumnExpr& column);

// The kept result of `kind` for `e` over `dictionary`, without computing
// one (not counted as a hit); null where none is kept.
std::shared_ptr<const EntryResult> kept_entry_result(EntryResultKind kind, const Expr& e, const ColumnExpr& column,
                                                     const storage::StringDictionary& dictionary);
// Whether the result of `kind` for `e` over `dictionary` is kept.
bool entry_result_kept(EntryResultKind kind, const Expr& e, const ColumnExpr& column,
                       const storage::StringDictionary& dictionary);

// Kept results and their bytes, for tests and EXPLAIN.
struct EntryResultCacheStats {
  size_t results = 0;
  size_t bytes = 0;
  uint64_t hits = 0;
};
EntryResultCacheStats entry_result_cache_stats();
// Drops every kept result (tests).
void clear_entry_result_cache();

}  // namespace tally::executor
