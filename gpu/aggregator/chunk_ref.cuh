#pragma once
// A chunk as the kernels see it: checked against the aggregation's shape,
// then a view (kernels::ChunkRef) of rows [off, off + n) of it.
#include <cstdint>
#include <string>

#include "common/error.hpp"
#include "gpu/aggregator/kernels/views.cuh"
#include "gpu/group_by_spec.hpp"

namespace tally::gpu::aggregator {

// Throws Error(XX000) for a chunk that does not match `spec` (column count,
// missing data, NULLs in a column declared NOT NULL).
inline void validate_chunk(const GroupBySpec& spec, const ChunkPointers& chunk) {
  if (chunk.rows < 0) throw Error(SqlState::internal_error, "GPU: negative row count");
  if (chunk.values.size() != spec.columns.size())
    throw Error(SqlState::internal_error, "GPU: chunk has " + std::to_string(chunk.values.size()) +
                                              " value columns, the aggregation expects " +
                                              std::to_string(spec.columns.size()));
  if (chunk.rows > 0 && !chunk.key.data)
    throw Error(SqlState::internal_error, "GPU: chunk without key data");
  for (size_t c = 0; c < chunk.values.size(); ++c) {
    if (chunk.rows > 0 && !chunk.values[c].data)
      throw Error(SqlState::internal_error,
                  "GPU: chunk without data for column " + std::to_string(c));
    if (chunk.values[c].validity && !spec.columns[c].may_have_nulls)
      throw Error(SqlState::internal_error,
                  "GPU: column " + std::to_string(c) + " has NULLs but was declared NOT NULL");
  }
}

// Rows [off, off + n) of the chunk (device pointers).
template <class K>
kernels::ChunkRef<K> chunk_ref(const GroupBySpec& spec, const ChunkPointers& chunk, int64_t off,
                               int64_t n) {
  kernels::ChunkRef<K> r;
  r.keys = static_cast<const K*>(chunk.key.data) + off;
  r.key_validity = chunk.key.validity ? chunk.key.validity + off : nullptr;
  r.rows = n;
  for (size_t c = 0; c < chunk.values.size(); ++c) {
    const bool wide = value_bytes(spec.columns[c].type) == 8;  // float64 read as its bits
    r.columns[c].wide = wide;
    r.columns[c].data = static_cast<const char*>(chunk.values[c].data) + off * (wide ? 8 : 4);
    r.columns[c].validity = chunk.values[c].validity ? chunk.values[c].validity + off : nullptr;
  }
  return r;
}

}  // namespace tally::gpu::aggregator
