#pragma once
// A statement's materialized result: typed column vectors plus the command tag,
// streamed to a ResultWriter in text or binary per column, resumable after a
// row limit (portals, cursors). Encoding reuses one buffer per row: no
// per-value heap allocation on the hot path.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/value.hpp"
#include "common/query_handler.hpp"

namespace tally::executor {

struct ResultSet {
  std::vector<tally::FieldDescription> fields;  // formats filled by the portal
  std::vector<Vector> columns;
  size_t rows = 0;
  // "SELECT" tags become "SELECT <rows sent>"; other tags are sent as they are.
  std::string tag = "SELECT";
  bool returns_rows = true;
  // What produced the columns (the aggregation's engine run), when it may be
  // released after the rows are sent (ResultWriter::release_after_reply)
  // rather than before the first of them. Its destructor must not read the
  // plan: the plan may be gone by then.
  std::shared_ptr<void> retained;
};

// Field descriptions for result columns (type OID, length, modifier).
tally::FieldDescription describe_column(const std::string& name, SqlType type);

// Streams rows [position, position + max_rows) of result; advances position.
// Returns the number of rows written.
size_t stream_rows(const ResultSet& result, const std::vector<tally::Format>& formats, size_t& position,
                   uint64_t max_rows, tally::ResultWriter& out);

// Expands Bind's result format codes to one per column; 08P01-like 22023 error
// when the count is neither 0, 1 nor the column count.
std::vector<tally::Format> expand_formats(std::span<const tally::Format> formats, size_t columns);

}  // namespace tally::executor
