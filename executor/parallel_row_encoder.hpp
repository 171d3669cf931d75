#pragma once
// Encodes a large result's DataRows on several threads (the session's and
// helpers from the shared worker pool) and hands them to the writer in row
// order.
#include <cstddef>
#include <vector>

#include "executor/row_encoder.hpp"
#include "common/query_handler.hpp"

namespace tally::executor::row_encoding {

// Results of at least this many rows are encoded by several threads: the
// session's thread and helpers from the shared worker pool each encode whole
// blocks of rows into their own buffer, and the session's thread sends the
// blocks in row order. Below 16K rows one thread encodes faster than the
// hand-offs cost; above it, single-threaded encoding of a GPU result can take
// as long as the kernel that produced it.
constexpr size_t kParallelEncodeRows = size_t{1} << 14;

// encode_rows over [begin, end) with helpers from the worker pool; the
// calling thread sends every block in order (encoding those no helper has
// claimed yet itself), so the result is byte for byte what encode_rows writes.
void encode_rows_parallel(std::vector<ColumnCoder>& columns, size_t begin, size_t end, tally::ResultWriter& writer);

}  // namespace tally::executor::row_encoding
