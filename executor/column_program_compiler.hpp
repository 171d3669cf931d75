#pragma once
// Compiles executor Expr trees (the binder's output) over one stored table's
// columns into column programs (common/column_program.hpp), which the
// aggregation engines evaluate where the columns are. Returns nullopt for
// anything outside the programs' subset (text, division, functions, ...):
// the host's row-by-row evaluation then stays the path, so a program only
// ever replaces evaluation whose answer it gives exactly.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/column_program.hpp"
#include "executor/expression.hpp"
#include "executor/program_constants.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {

// The stored columns programs read: program column i is table column
// table_columns[i] (ColumnExpr::index), in the order loads first named them.
// Lookup columns (a joined relation's values by key, lookup_join.hpp) are
// numbered apart, in `lookups`, until place_lookups moves them past the
// table columns, where the engines put them (AggregationSpec::lookup_columns).
// Dictionaries of at most this many entries have their text conditions
// compiled as tests of the codes that pass; over larger ones a condition is
// an equality with constants (codes compared), a LIKE the engine matches
// (ProgramColumnMap::texts_on_device), or its verdict by code, looked up.
constexpr int32_t kTextConditionEntries = 1 << 16;

struct ProgramColumnMap {
  std::vector<int> table_columns;
  std::vector<LookupColumn> lookups;
  // The dictionary of a text column (every chunk's codes index a prefix of
  // it); empty or null: conditions on text are not compiled.
  std::function<std::shared_ptr<const storage::StringDictionary>(int table_column)> dictionary;
  // Lookups compile by their types alone, their tables not built yet: the
  // programs only say whether the expressions compile (a plan's choice).
  bool lookups_unbuilt = false;
  // A LIKE over a text column of more entries than the compiler evaluates
  // once each is compiled as a lookup of verdicts the engine makes
  // (LookupColumn::text): where a GPU may run the programs, which matches
  // them on the device; the host's row-by-row evaluation costs the CPU
  // engine no more.
  bool texts_on_device = false;
  // Threads that evaluate a text column's conditions and values once per
  // dictionary entry (dictionary_entry_values.hpp).
  int threads = 1;
  // Arrays the compiler made that lookup columns point into (a text
  // condition's verdict or a function's value per dictionary code):
  // whoever runs the programs keeps them.
  std::vector<std::shared_ptr<const void>> arrays;
  int add(int table_column);
  int add_lookup(const LookupColumn& column);
};

// Points each lookup step of `program` at its column's place after the
// table columns of `columns`; call once the programs sharing the map are compiled.
void place_lookups(ColumnProgram& program, const ProgramColumnMap& columns);

// A WHERE clause (or one conjunct) as a boolean program.
std::optional<ColumnProgram> compile_filter(const Expr& e, ProgramColumnMap& columns,
                                            const std::vector<Value>* parameters);

// An aggregate input: int64 (integers, booleans as 0/1, numerics scaled to
// their static scale) or float64 (float8).
std::optional<ColumnProgram> compile_input(const Expr& e, ProgramColumnMap& columns,
                                           const std::vector<Value>* parameters);

// The input of min or max of a stored text column: each row's rank in the
// order of the column's dictionary (`rank_of_code`, dictionary_order.hpp),
// looked up by the row's code; the array must outlive the program's runs.
ColumnProgram compile_text_rank(int table_column, ProgramColumnMap& columns, const std::vector<int32_t>& rank_of_code);
// A group key as an int64 program: integers, dates and booleans as they
// are, a numeric at its static scale (the program's scale), text as codes
// of one dictionary, which `dictionary` receives: a stored column's, or that
// of the joined relation's column a lookup reads (null while lookups are
// unbuilt).
std::optional<ColumnProgram> compile_key(const Expr& e, ProgramColumnMap& columns, const std::vector<Value>* parameters,
                                         std::shared_ptr<const storage::StringDictionary>& dictionary);

}  // namespace tally::executor
