#pragma once
// COPY ... FROM: parses text or CSV input in large blocks (no allocation per
// value), converts each field with the column's input function straight into
// the appender's chunk buffers, and commits once at the end. A bad row throws
// PostgreSQL's error with CONTEXT "COPY t, line N[, column c: "v"]" and the
// table is left unchanged.
#include <cstdint>
#include <vector>

#include "catalog/table_snapshot.hpp"
#include "executor/ddl/statement_context.hpp"
#include "executor/dml/copy_options.hpp"
#include "executor/dml/copy_source.hpp"

namespace tally::executor::dml {

// Returns the number of rows loaded. end_marker_seen is set when the data
// ended with a "\." line (the caller then drains the client stream).
uint64_t copy_from(StatementContext& ctx, const catalog::TableDef& def, const std::vector<int>& targets,
                   const CopyOptions& options, CopySource& source, bool& end_marker_seen);

}  // namespace tally::executor::dml
