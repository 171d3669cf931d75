#pragma once
// Where the column cache puts a stored column's copy in device memory so that
// the copies of one column in consecutive chunks are adjacent: a query over
// resident chunks can then aggregate several chunks in one launch (one
// kernel over their joined rows) instead of one launch per chunk.
//
// Each (device, table, column, width, part) gets a region of reserved device
// virtual addresses; a column filled for that key is placed right after the
// one placed last (its bytes rounded up to 256), so that a chunk's values,
// and apart from them its validity bytes, continue the previous chunk's.
// Physical memory is mapped there in blocks (CUDA virtual memory
// management, whole allocation granules): one column's worth for a region's
// first column, then twice as many columns per block up to 16, so that a
// cold read of a hundred chunks makes a few mapping calls, not a hundred. A
// column may straddle two blocks and then holds both. A block is freed when
// the last column placed in it is; until it is filled it holds memory the
// column cache does not count (at most 15 columns' worth per column read).
// Host-only header; the implementation is column_regions.cu (CUDA builds only).
#include <cstdint>
#include <memory>
#include <optional>

#include "gpu/pipeline/column_cache.hpp"

namespace tally::gpu {

struct PlacedColumn {
  void* data = nullptr;
  // Unmaps and frees the physical memory when the last reference goes; the
  // caller guarantees no kernel still reads it (cache leases).
  std::shared_ptr<void> backing;
};

// One backing holding both: a column whose bytes straddle two mapped
// blocks, or a column's values and validity placed apart.
std::shared_ptr<void> both_backings(std::shared_ptr<void> first, std::shared_ptr<void> second);

// What of a stored column a placement holds: its values, or the validity
// bytes (one per row) of a column with NULLs, which have regions of their
// own so that they too are adjacent chunk after chunk.
enum class ColumnPart : uint8_t { values, validity };

// Device memory of `bytes` for `part` of `key`'s column on `device`, right
// after the previous one placed for the same table, column, width and part;
// nullopt when it cannot be placed (out of device memory, or virtual memory
// management unsupported). Thread-safe.
std::optional<PlacedColumn> place_column(int device, const ColumnKey& key, ColumnPart part, uint64_t bytes);

}  // namespace tally::gpu
