#pragma once
// COPY ... TO: renders rows in text or CSV format with PostgreSQL's
// escaping/quoting rules, into large CopyData blocks sent to STDOUT (CopyOut
// messages) or written to a server file. Tables render from a snapshot here;
// COPY (query) TO (copy_query.hpp) renders a query's result with the same
// field writers.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/table_snapshot.hpp"
#include "executor/ddl/statement_context.hpp"
#include "executor/dml/copy_options.hpp"

namespace tally::executor::dml {

// Receives blocks of COPY output.
using CopySink = std::function<void(std::string_view)>;
// Output is handed on in blocks of about this size (one CopyData message each).
constexpr size_t copy_flush_bytes = 1 << 16;

// Calls sink with blocks of output; returns the number of rows.
uint64_t copy_to(StatementContext& ctx, const catalog::TableSnapshot& snapshot, const std::vector<int>& targets,
                 const CopyOptions& options, const CopySink& sink);

// Appends field `index` of a row (its delimiter first unless index == 0):
// CopyAttributeOutText or CopyAttributeOutCSV. A NULL is append_copy_null.
void append_copy_field(std::string& out, std::string_view value, const CopyOptions& options, size_t index,
                       size_t columns);
void append_copy_null(std::string& out, const CopyOptions& options, size_t index);
// The HEADER line (column names rendered as fields, then a newline).
void append_copy_header(std::string& out, const std::vector<std::string>& names, const CopyOptions& options);

// Runs `produce` with a sink to the client (CopyOutResponse, CopyData...,
// CopyDone; filename empty) or to a server file (absolute path only; 42602,
// 58P01/58030 as PostgreSQL). Returns the row count produce returns.
uint64_t run_copy_out(StatementContext& ctx, const std::string& filename, int columns,
                      const std::function<uint64_t(const CopySink&)>& produce);

}  // namespace tally::executor::dml
