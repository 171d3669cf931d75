#pragma once
// A row filter that is only comparisons of a column with a constant or
// with another column of the same stored width, or IN lists of integer
// constants, joined by AND (a date
// range, BETWEEN, `l_quantity < 24`, `l_commitdate < l_receiptdate`: most
// WHERE clauses of analytic queries), recognized among a column program's steps and
// evaluated as one typed loop over the rows per comparison, where the block
// evaluator (column_program_batch.hpp) loads, compares and combines 128-bit
// stack slots step by step. The answer is the same: a row passes when every
// comparison is true, and a NULL column value makes its comparison NULL,
// so the row fails; how the ANDs nest and short-circuit does not change that.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/column_program.hpp"

namespace tally {

struct ColumnComparison {
  int32_t column = 0;          // index into the program's columns
  ProgramOp op = ProgramOp::eq_int;  // column `op` constant (a constant on the left is mirrored)
  int64_t value = 0;           // the constant of an integer comparison
  double fvalue = 0;           // of a float comparison
  int32_t column2 = -1;        // >= 0: `column op column2` (the same width), no constant
  std::vector<int64_t> values;  // op in_list: `column IN (values)`, ascending
  // op in_list over a narrow span (in_list_bits): bit v - values[0] set for
  // each value, and the bit past the span clear. Empty otherwise.
  std::vector<uint64_t> bits;
};

// The comparisons of `program` when it is a boolean program of nothing but
// comparisons of integer or float columns with constants or with columns of
// the same width, AND and its short circuits; false otherwise.
bool comparison_conjunction(const ColumnProgram& program, const std::vector<ProgramColumn>& columns,
                            std::vector<ColumnComparison>& out);

// mask[begin, end): 1 where every comparison holds.
void evaluate_comparisons(const std::vector<ColumnComparison>& comparisons, const std::vector<ProgramColumn>& columns,
                          size_t begin, size_t end, uint8_t* mask);

// The rows r - begin of [begin, end) where mask[r] is 1 (masks hold 0 or 1),
// ascending: eight rows at a time, so that a selective mask's zeros cost
// one test per eight rows and `rows` never holds a row that does not pass.
void rows_of_mask(const uint8_t* mask, size_t begin, size_t end, std::vector<uint32_t>& rows);

// The range of a column's non-NULL values over some rows (a stored chunk's
// statistics), as the comparisons read them: `known` false where not known;
// min > max where every value is NULL.
struct ValueRange {
  bool known = false;
  int64_t min = 0, max = 0;
};

// False when no row whose integer columns lie within `ranges` (one per
// program column) can pass every comparison: a chunk whose statistics say
// so need not be read. A NULL fails its comparison, so a column of no
// non-NULL value rules every row out. Float comparisons rule nothing out
// (a chunk's float range leaves NaN out, which compares above every value).
bool comparisons_may_pass(const std::vector<ColumnComparison>& comparisons, const std::vector<ValueRange>& ranges);

}  // namespace tally
