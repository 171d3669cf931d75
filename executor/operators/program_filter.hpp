#pragma once
// A scan filter conjunct over several stored columns (an OR of conditions on
// texts and numbers, as TPC-H Q19's parts and a dashboard's "this brand in
// these containers, or that brand in those") run as one column program over
// the stored values: its text conditions are verdicts per dictionary code
// (evaluated once per entry, and kept between statements where they may be:
// entry_result_cache.hpp), its comparisons typed loops a block of rows at a
// time (common/column_program_batch.hpp). The expression evaluator would
// convert every column it reads and, for each OR branch, gather the rows
// still undecided.
//
// Compiled for one run of a scan, over the dictionaries of its table
// snapshot. A program that raises an error flag (an overflow, or a value
// the program cannot represent) answers nothing: the scan evaluates the
// conjunct itself over those rows, as PostgreSQL would.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/column_program.hpp"
#include "executor/expression.hpp"
#include "storage/column_vector.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor {

class ProgramFilter {
 public:
  // Where the program reads a column: read column `read` of the scan, stored
  // as type `type`, for the conjunct's column-space index `space_index`.
  struct Read {
    int space_index = 0;
    size_t read = 0;
    SqlType type;
  };
  // The program of `conjunct` over the scan's read columns (`reads`), its
  // text columns' dictionaries from `dictionary` (by read column); null where
  // it does not compile to one, or reads a column stored narrower than the
  // programs read (int2, bool).
  static std::unique_ptr<const ProgramFilter> compile(
      const Expr& conjunct, const std::vector<Read>& reads,
      const std::function<std::shared_ptr<const storage::StringDictionary>(size_t read)>& dictionary,
      const std::vector<Value>* parameters, int threads);

  // The positions j in [0, rows) of the candidate rows of `batch` (stored
  // row kept[j], or begin + j where `kept` is null) that pass. False, with
  // `passing` unspecified, where the program raised an error flag.
  bool select(const storage::ChunkBatch& batch, size_t begin, size_t end, const std::vector<uint32_t>* kept,
              size_t rows, std::vector<uint32_t>& passing) const;

  // For an engine that selects rows itself (scan_selection.hpp): the
  // program, the read column of each of its columns, then the lookup
  // columns it reads after them (host arrays, alive as long as this is).
  const ColumnProgram& program() const { return program_; }
  const std::vector<size_t>& reads() const { return reads_; }
  const std::vector<ProgramColumn>& lookups() const { return lookups_; }

 private:
  ColumnProgram program_;
  std::vector<size_t> reads_;            // program column i: read column reads_[i]
  std::vector<ProgramColumn> lookups_;   // after the read columns
  std::vector<std::shared_ptr<const void>> arrays_;  // what lookups_ point into
};

}  // namespace tally::executor
