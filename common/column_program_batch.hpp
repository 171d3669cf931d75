#pragma once
// Column programs (common/column_program.hpp) evaluated on the host a block
// of rows at a time: each step runs over the whole block before the next,
// so a step costs a tight loop over arrays instead of one dispatch (and one
// mispredicted branch) per row and step, as run_program_row pays. The
// answers, NULLs and error flags are those of run_program_row row by row:
// a short circuit (skip_if_false, skip_if_true) evaluates its right operand
// only for the rows it does not skip, so a row PostgreSQL would not compute
// raises no error here either.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/column_program.hpp"

namespace tally {

// Rows [begin, end) of `program` over `columns`, with evaluate_program's
// contract (common/column_program_run.hpp): a boolean program writes `mask`
// (1 = passes); an int64 or float64 one writes `values` and `validity`, and
// leaves the rows `mask` (may be null) marks 0 NULL and uncomputed. Returns
// the ORed error flags.
uint32_t evaluate_program_rows(const ColumnProgram& program, const std::vector<ProgramColumn>& columns, size_t begin,
                               size_t end, uint8_t* mask, void* values, uint8_t* validity);

// Whether the block evaluator takes `program`: its stack depth stays within
// kProgramStackDepth, every step finds its operands, and every short
// circuit's skipped steps leave the stack as they found it (as the compiler
// emits them). Others are evaluated row by row.
bool program_runs_in_blocks(const ColumnProgram& program);

}  // namespace tally
