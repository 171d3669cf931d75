#pragma once
// One segment of COPY FROM input (whole records only) parsed and converted by
// a worker thread into column buffers, in the table's storage form: what the
// appender takes in bulk. Segments are parsed in any order and on any thread,
// then appended in input order (copy_from.cpp), so that line numbers, the
// first error reported and dictionary codes are those of a serial load.
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "catalog/table_snapshot.hpp"
#include "executor/dml/copy_options.hpp"
#include "executor/dml/copy_record_parser.hpp"
#include "storage/string_dictionary.hpp"

namespace tally::executor::dml {

// What every worker of one COPY reads: decided once, never written after.
struct CopyPlan {
  enum class Kind { text, bytea, int4, int8, float8, date, other };
  const catalog::TableDef* def = nullptr;
  const std::vector<int>* targets = nullptr;
  const CopyOptions* options = nullptr;
  std::vector<Kind> kinds;                                 // per target
  std::vector<size_t> widths;                              // per table column
  std::vector<const storage::StringDictionary*> dicts;     // per table column; text and bytea targets only
  std::vector<int> untargeted;
  Eol eol = Eol::unknown;

  CopyPlan(const catalog::TableDef& def, const std::vector<int>& targets, const CopyOptions& options);
};

struct CopySegment {
  std::string input;   // whole records
  bool first = false;  // starts at line 1 (the header line, with HEADER)

  // Results.
  uint64_t lines = 0;  // lines consumed (as PostgreSQL counts them), an end marker's included
  bool end_marker = false;
  size_t rows = 0;
  std::vector<std::vector<uint8_t>> data;   // per table column: rows * width bytes
  std::vector<std::vector<uint8_t>> valid;  // per table column: empty = no NULLs, else rows bytes (1 = non-NULL)
  // Text values the working dictionary did not hold yet when the worker
  // looked: the appending thread interns them in order and patches the codes.
  struct Miss {
    uint32_t row;
    int column;
    uint32_t offset, size;  // into miss_bytes
    uint64_t hash;
  };
  std::vector<Miss> misses;
  std::string miss_bytes;
  // The first error: rethrown by the appending thread with CONTEXT
  // "COPY t, line <first line + error_line - 1><error_context>".
  std::exception_ptr error;
  uint64_t error_line = 0;  // 1-based within the segment
  std::string error_context;
};

// Parses and converts seg.input; never throws (errors go into seg.error).
void parse_segment(const CopyPlan& plan, CopySegment& seg) noexcept;

}  // namespace tally::executor::dml
