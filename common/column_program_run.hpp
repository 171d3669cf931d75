#pragma once
// Column programs (common/column_program.hpp) evaluated on the host, before
// an engine's own run: the CPU engine's way to take a spec with programs, and
// the GPU engine's where it does not evaluate them on the device. A row
// filter compacts the chunk to the rows it passes (so that a filtered-out
// row makes no group); value programs become plain input columns.
#include <functional>
#include <memory>

#include "common/aggregate_engine.hpp"

namespace tally {

// Whether the spec carries programs (the engines evaluate them before aggregating).
bool has_programs(const AggregationSpec& spec);

// The spec an engine's own run takes once the programs are evaluated.
AggregationSpec without_programs(const AggregationSpec& spec);

// The ProgramColumn of a ColumnView with data.
inline ProgramColumn program_column(const ColumnView& v) {
  return ProgramColumn{v.data, v.validity, static_cast<uint8_t>(v.width)};
}

// Evaluates `program` over rows [0, rows) of `columns` on the host: a
// boolean program into `mask` (1 = passes), an int64 or float64 one into
// `values` (rows x 8 bytes) and `validity` (1 = not NULL), skipping the rows
// `mask` (may be null) marks 0. Returns the ORed error flags. The lookup
// columns (AggregationSpec::lookup_columns) follow `columns`.
uint32_t evaluate_program(const ColumnProgram& program, const std::vector<ColumnView>& columns, size_t rows,
                          uint8_t* mask, void* values, uint8_t* validity,
                          const std::vector<LookupColumn>& lookups = {});

// Replaces the data and validity of columns[0, count) by copies of their
// rows kept[0, n), held in `bytes`: a program then reads n rows from row 0.
void gather_program_columns(std::vector<ProgramColumn>& columns, size_t count, const uint32_t* kept, size_t n,
                            std::vector<std::unique_ptr<uint8_t[]>>& bytes);

// A run that evaluates the spec's programs on the host and hands the
// resulting chunks to the run `start` makes for without_programs(spec). It
// holds no column (the host reads what the programs read). A program's
// error (an overflow PostgreSQL reports, or a value past int64) throws
// ProgramOverflow.
std::unique_ptr<AggregationRun> make_program_run(
    const AggregationSpec& spec, const std::function<std::unique_ptr<AggregationRun>(const AggregationSpec&)>& start);

// Thrown for a program's error flags: the planner runs the statement again
// on its exact host path, which answers as PostgreSQL does (an error or not).
struct ProgramOverflow {
  uint32_t flags = 0;
};

}  // namespace tally
