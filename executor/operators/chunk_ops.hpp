#pragma once
// Row-level helpers the operators share: selecting rows of a Vector,
// appending one Vector to another, and the EvalInput that lets an expression
// bound against a query's column space read an operator's chunk.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "executor/expression.hpp"
#include "executor/operators/physical_operator.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

// A row number that gathers a NULL (the missing side of an outer join).
inline constexpr uint32_t kNullRow = UINT32_MAX;
// Candidate pairs a join holds at once per input chunk (a round of a quarter
// million pairs with a residual takes tens of milliseconds): a nested loop, a
// heavily duplicated key or a LATERAL subquery of many rows is joined in
// rounds of at most this many pairs, so it never materializes every pair,
// and cancel is looked at between rounds.
inline constexpr size_t kPairsPerRound = size_t{1} << 18;

// Rows of `v` in the order of `rows` (kNullRow gives NULL).
Vector gather(const Vector& v, const std::vector<uint32_t>& rows);
// The same on `threads` threads, each filling a range of the result, for a
// column in one plain array (integers, floats, coded texts); any other is
// gathered on the calling thread.
Vector gather(const Vector& v, const std::vector<uint32_t>& rows, int threads);
// Whether v holds its values in one plain array: integers (ints or
// shared_ints), floats, or coded texts; no AvgParts.
bool is_plain_array(const Vector& v);
// A column of `rows` rows of plain arrays (is_plain_array), of the type and
// dictionary of `like`, written row by row from any thread, each row once:
// the array and the NULL flags are sized and faulted in up front.
class PlainColumnWriter {
 public:
  PlainColumnWriter(const Vector& like, size_t rows);
  // Row `at` := row `row` of `from` (plain, of the same type and dictionary).
  void copy(size_t at, const Vector& from, size_t row) {
    switch (physical_) {
      case Physical::floating: out_.floats[at] = from.floats[row]; break;
      case Physical::text: out_.codes[at] = from.codes[row]; break;
      default: out_.ints[at] = from.int_data()[row]; break;
    }
    nulls_[at] = from.null_at(row) ? 1 : 0;
  }
  // Rows [at, at + n) := row `row` of `from` (a group's key over its rows).
  void fill(size_t at, size_t n, const Vector& from, size_t row) {
    switch (physical_) {
      case Physical::floating: std::fill_n(out_.floats.begin() + static_cast<std::ptrdiff_t>(at), n, from.floats[row]); break;
      case Physical::text: std::fill_n(out_.codes.begin() + static_cast<std::ptrdiff_t>(at), n, from.codes[row]); break;
      default: std::fill_n(out_.ints.begin() + static_cast<std::ptrdiff_t>(at), n, from.int_data()[row]); break;
    }
    std::fill_n(nulls_.begin() + static_cast<std::ptrdiff_t>(at), n, static_cast<uint8_t>(from.null_at(row) ? 1 : 0));
  }
  void set_null(size_t at) { nulls_[at] = 1; }
  Vector finish();

 private:
  Vector out_;
  Physical physical_;
  std::vector<uint8_t> nulls_;
};
void append_vector(Vector& dst, const Vector& src);
// The same, taking src's arrays where dst has no rows yet (a result of one
// chunk, or its first): the millions of rows of one chunk are not copied.
void append_vector(Vector& dst, Vector&& src);
// The chunks' rows one after another in one chunk of `columns`, as
// append_vector would make it: arrays sized once and filled chunk by chunk
// on `threads` threads (texts not coded by one dictionary, and intervals,
// are appended on the calling thread).
DataChunk concat_chunks(std::vector<DataChunk>&& chunks, const std::vector<OutputColumn>& columns, int threads);
// Bytes a row takes in the arrays of `columns` (a text value's characters
// not counted): what operators that materialize rows hold against the
// statement's memory budget (common/memory_tracker.hpp) per row.
size_t materialized_row_bytes(const std::vector<Vector>& columns);
// The rows where a boolean vector is true (not NULL, not false).
std::vector<uint32_t> true_rows(const Vector& mask);
// Every column of a chunk gathered by `rows`.
DataChunk gather_chunk(const DataChunk& chunk, const std::vector<uint32_t>& rows);

// Row keys over several vectors (join keys, IN lists): NULL keys match
// nothing; char(n) keys ignore trailing blanks as its equality does.
bool has_null_key(const std::vector<Vector>& keys, size_t row);
uint64_t key_hash(const std::vector<Vector>& keys, size_t row);
// key_hash of rows [begin, end) into out[0 .. end - begin): the type
// dispatched once per column, not per row.
void key_hashes(const std::vector<Vector>& keys, size_t begin, size_t end, uint64_t* out);
bool keys_equal(const std::vector<Vector>& a, size_t ra, const std::vector<Vector>& b, size_t rb);
// Whole rows as DISTINCT and set operations compare them: NULLs equal each other.
uint64_t row_hash(const std::vector<Vector>& columns, size_t row);
bool rows_equal(const std::vector<Vector>& a, size_t ra, const std::vector<Vector>& b, size_t rb);
// The same over some columns of one chunk (DISTINCT ON's), rows ra and rb.
uint64_t row_hash(std::span<const Vector* const> columns, size_t row);
bool rows_equal(std::span<const Vector* const> columns, size_t ra, size_t rb);


// Rows `rows` of `input` as an input of their own, for evaluating
// `readers`: the columns they read are gathered into `storage` (every
// column where one of them reads columns collect_refs does not list); the
// others are null.
EvalInput narrowed_input(const EvalInput& input, const std::vector<uint32_t>& rows,
                         const std::vector<Expr*>& readers, std::vector<Vector>& storage);
// The chunk's columns placed at their positions in a column space of `width`
// columns: layout[i] is the space index of chunk column i.
EvalInput space_input(const DataChunk& chunk, const std::vector<int>& layout, size_t width,
                      const std::vector<Value>* parameters);
// A chunk's columns by column-space index (chunk.columns[c] at layout[c];
// null where no column sits), as space_input points at them, for
// evaluate_taking.
std::vector<Vector*> columns_by_space(DataChunk& chunk, const std::vector<int>& layout, size_t width);
// The values of `exprs` over `input`. `owned` (by column-space index, as
// input.columns; empty: none) holds the input columns the caller is done
// with: an expression that is one of those columns as it is, and the only
// expression naming it bare, takes it (moved, not copied, and left with no
// rows), so that millions of rows of a derived table, a join, a window or a
// lookup's build side pass up a level without a copy. The other expressions
// are evaluated first: they may read a column another one takes.
std::vector<Vector> evaluate_taking(const std::vector<const Expr*>& exprs, const EvalInput& input,
                                    const std::vector<Vector*>& owned);

}  // namespace tally::executor
