#pragma once
// Where the column cache puts a stored column's copy in device memory so that
// the copies of one column in consecutive chunks are adjacent: a query over
// resident chunks can then aggregate several chunks in one launch (one
// kernel over their joined rows) instead of one launch per chunk.
//
// Each (device, table, column, width) gets a region of reserved device
// virtual addresses cut into equal slots; a column filled for that key takes
// the slot after the one taken last. Physical memory is mapped there in
// blocks of consecutive slots (CUDA virtual memory management), one slot for
// a region's first column, then twice as many per block up to 16: a cold
// read of a hundred chunks makes a few mapping calls, not a hundred. A block
// is freed when the last column placed in it is; until its slots are taken
// they hold memory the column cache does not count (at most 15 slots per
// column read). Columns smaller than the allocation granularity, or larger
// than their region's slots, get no place (the caller allocates them itself).
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

// Device memory of `bytes` for `key`'s column on `device`, right after the
// previous column placed for the same table, column and width; nullopt when
// this column cannot be placed (too small, too large for its region's slots,
// out of device memory, or virtual memory management unsupported).
// Thread-safe.
std::optional<PlacedColumn> place_column(int device, const ColumnKey& key, uint64_t bytes);

}  // namespace tally::gpu
