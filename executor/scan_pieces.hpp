#pragma once
// A scan of one table in pieces (TableScan's, and run_select's scan of a
// plan over one table): each piece a stored chunk, or a slice of one where
// the table has too few chunks to keep every core busy to the end of the
// scan; a chunk is read once for all its slices.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "storage/column_vector.hpp"

namespace tally::executor {

class TableSnapshot;

// Rows [begin, end) of a stored chunk.
struct ScanPiece {
  size_t chunk = 0, begin = 0, end = 0;
  bool whole(size_t chunk_rows) const { return begin == 0 && end == chunk_rows; }
};

// The pieces of a scan: a table of fewer chunks than `wanted` has its chunks
// split into slices of at least 65,536 rows, as near `wanted` pieces as
// that allows; a larger table's chunks stay whole. Chunks `skipped` marks
// (one flag per chunk, or empty) have no piece and count for nothing.
std::vector<ScanPiece> scan_pieces(const TableSnapshot& table, size_t wanted,
                                   const std::vector<uint8_t>& skipped = {});

// Rows [begin, end) of a chunk's stored columns (a copy of their bytes).
storage::ChunkBatch slice_of(const storage::ChunkBatch& batch, size_t begin, size_t end);

// The stored chunks of a scan's pieces, each read once for all its slices
// (the first slice to need it reads, the others wait for it) and let go
// when its last slice has it. Thread-safe.
class ChunkReads {
 public:
  using Read = std::function<std::shared_ptr<const storage::ChunkBatch>(size_t chunk)>;
  ChunkReads(const std::vector<ScanPiece>& pieces, size_t chunks, Read read);
  // The whole stored chunk of `piece`.
  std::shared_ptr<const storage::ChunkBatch> batch(const ScanPiece& piece);
  // The rows of `piece` alone: its chunk's batch, or a copy of the slice.
  std::shared_ptr<const storage::ChunkBatch> rows(const ScanPiece& piece);

 private:
  struct Chunk {
    std::once_flag once;
    std::shared_ptr<const storage::ChunkBatch> batch;
    std::atomic<size_t> slices_left{0};
  };
  std::vector<Chunk> chunks_;
  Read read_;
};

}  // namespace tally::executor
