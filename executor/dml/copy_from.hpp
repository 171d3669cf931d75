#pragma once
// COPY ... FROM: a reader thread cuts text or CSV input into segments of
// whole records (copy_splitter.hpp), parse workers convert them into column
// buffers (copy_segment.hpp; Config::cpu_threads of them) and the
// statement's thread appends them in input order, then commits once at the
// end. A bad row throws PostgreSQL's
// error with CONTEXT "COPY t, line N[, column c: "v"]" (the first bad line of
// the input, as a serial load reports it) and the table is left unchanged.
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
