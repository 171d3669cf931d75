#pragma once
// Encodes a large result's DataRows on several threads (the session's and
// helpers from the shared worker pool) and hands them to the writer in row
// order.
#include <cstddef>
#include <vector>

#include "executor/row_encoder.hpp"
#include "protocol/query_handler.hpp"

namespace tally::executor::row_encoding {

// Results of at least this many rows are encoded by several threads: the
// session's thread and helpers from the shared worker pool each encode whole
// blocks of rows into their own buffer, and the session's thread sends the
// blocks in row order. 16K rows: 65,536 GPU groups on the 16-core H100 host
// cost ~4 ms of single-threaded encoding and send, as much as the kernel.
constexpr size_t kParallelEncodeRows = size_t{1} << 14;

// encode_rows over [begin, end) with helpers from the worker pool; the
// calling thread sends every block in order (encoding those no helper has
// claimed yet itself), so the result is byte for byte what encode_rows writes.
void encode_rows_parallel(std::vector<ColumnCoder>& columns, size_t begin, size_t end, protocol::ResultWriter& writer);

}  // namespace tally::executor::row_encoding
