#pragma once
// Compiles executor Expr trees (the binder's output) over one stored table's
// columns into column programs (common/column_program.hpp), which the
// aggregation engines evaluate where the columns are. Returns nullopt for
// anything outside the programs' subset (text, division, functions, ...):
// the host's row-by-row evaluation then stays the path, so a program only
// ever replaces evaluation whose answer it gives exactly.
#include <optional>
#include <vector>

#include "common/column_program.hpp"
#include "executor/expression.hpp"

namespace tally::executor {

// The stored columns programs read: program column i is table column
// table_columns[i] (ColumnExpr::index), in the order loads first named them.
struct ProgramColumnMap {
  std::vector<int> table_columns;
  int add(int table_column);
};

// A WHERE clause (or one conjunct) as a boolean program.
std::optional<ColumnProgram> compile_filter(const Expr& e, ProgramColumnMap& columns,
                                            const std::vector<Value>* parameters);

// An aggregate input: int64 (integers, booleans as 0/1, numerics scaled to
// their static scale) or float64 (float8).
std::optional<ColumnProgram> compile_input(const Expr& e, ProgramColumnMap& columns,
                                           const std::vector<Value>* parameters);

}  // namespace tally::executor
