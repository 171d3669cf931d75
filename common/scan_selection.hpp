#pragma once
// A scan's row selection run by an engine that keeps copies of the stored
// columns (the GPU's device column cache): the scan's comparisons and the
// key tests of the hash joins above it (a bit per held key) evaluated over
// the engine's copies, and only the numbers of the rows that pass come back.
// The host then converts those rows alone; it never runs the comparisons or
// the key tests over the chunk. TPC-H's joins read lineitem this way: a
// semi join keeps a few percent of its sixty million rows.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/column_program.hpp"
#include "common/column_width.hpp"

namespace tally {

// A key test: the row passes where program column `column` (int32 or int64)
// holds a value v whose bit (v - min) >> shift is set, below `span`. A NULL
// key fails. With a shift, or a bitmap of one column of a composite key, a
// row that passes may still match nothing: the scan then tests it exactly.
struct SelectionKeyTest {
  uint32_t column = 0;
  const uint64_t* bits = nullptr;  // span bits; read while start_selection runs (the engine copies them)
  int64_t min = 0;
  uint64_t span = 0;
  uint32_t shift = 0;
};

struct ScanSelectionSpec {
  uint64_t table = 0;                // table oid (ColumnIdentity::table)
  std::vector<uint32_t> columns;     // program column i is table column columns[i]
  std::vector<ColumnWidth> widths;   // as the column is stored
  ColumnProgram filter;              // boolean, loads of program columns; may be empty
  // The lookup columns the filter's lookup steps read (a text condition's
  // verdict per dictionary code), numbered after `columns`: host arrays,
  // read while start_selection runs and the selection lives.
  std::vector<ProgramColumn> lookups;
  std::vector<SelectionKeyTest> key_tests;
  bool compile_programs = true;      // SET jit (AggregationSpec::compile_programs)
};

// One piece of a chunk to select from: rows [begin, end) of storage chunk
// `chunk`, which holds `rows` rows. `host[i]` is program column i as the
// host read it (data, validity): the engine copies a column it does not
// keep from there.
struct SelectionPiece {
  uint64_t chunk = 0;
  size_t rows = 0;
  size_t begin = 0, end = 0;
  struct HostColumn {
    const void* data = nullptr;
    const uint8_t* validity = nullptr;
  };
  std::vector<HostColumn> host;
};

class ScanSelectionRun {
 public:
  virtual ~ScanSelectionRun() = default;
  // Appends to `out` the chunk row numbers in [begin, end) that pass, in
  // ascending order; false (nothing appended) where the engine could not
  // select them, and the caller filters the piece itself. Thread-safe: a
  // scan's workers select their pieces at once.
  virtual bool select(const SelectionPiece& piece, std::vector<uint32_t>& out) = 0;
  // EXPLAIN ANALYZE's lines about the run.
  virtual std::vector<std::string> report() const = 0;
};

}  // namespace tally
