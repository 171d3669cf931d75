#include "executor/scan_pieces.hpp"

#include <algorithm>

#include "executor/table_provider.hpp"

namespace tally::executor {

namespace {
constexpr size_t kMinSliceRows = size_t{1} << 16;
}  // namespace

std::vector<ScanPiece> scan_pieces(const TableSnapshot& table, size_t wanted, const std::vector<uint8_t>& skipped) {
  const size_t chunks = table.chunk_count();
  auto skip = [&skipped](size_t c) { return c < skipped.size() && skipped[c] != 0; };
  size_t read = 0;
  for (size_t c = 0; c < chunks; ++c) read += skip(c) ? 0 : 1;
  const size_t slices = read >= wanted || read == 0 ? 1 : (wanted + read - 1) / read;
  std::vector<ScanPiece> pieces;
  for (size_t c = 0; c < chunks; ++c) {
    if (skip(c)) continue;
    const size_t rows = table.chunk_rows(c);
    const size_t n = std::max<size_t>(1, std::min(slices, rows / kMinSliceRows));
    for (size_t i = 0; i < n; ++i) pieces.push_back({c, rows * i / n, rows * (i + 1) / n});
  }
  return pieces;
}

storage::ChunkBatch slice_of(const storage::ChunkBatch& batch, size_t begin, size_t end) {
  storage::ChunkBatch out;
  out.rows = end - begin;
  for (const auto& column : batch.columns) {
    storage::ColumnVector& v = out.columns.emplace_back();
    v.type = column.type;
    v.rows = out.rows;
    v.dictionary = column.dictionary;
    const size_t width = column.rows > 0 ? column.data.size() / column.rows : 0;
    v.data.assign(column.data.begin() + static_cast<long>(begin * width),
                  column.data.begin() + static_cast<long>(end * width));
    if (column.has_nulls()) {
      v.validity.assign(column.validity.begin() + static_cast<long>(begin),
                        column.validity.begin() + static_cast<long>(end));
    }
  }
  return out;
}

ChunkReads::ChunkReads(const std::vector<ScanPiece>& pieces, size_t chunks, Read read)
    : chunks_(chunks), read_(std::move(read)) {
  for (const ScanPiece& piece : pieces) chunks_[piece.chunk].slices_left.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<const storage::ChunkBatch> ChunkReads::batch(const ScanPiece& piece) {
  Chunk& chunk = chunks_[piece.chunk];
  std::call_once(chunk.once, [&] { chunk.batch = read_(piece.chunk); });
  std::shared_ptr<const storage::ChunkBatch> batch = chunk.batch;
  if (chunk.slices_left.fetch_sub(1, std::memory_order_acq_rel) == 1) chunk.batch.reset();
  return batch;
}

std::shared_ptr<const storage::ChunkBatch> ChunkReads::rows(const ScanPiece& piece) {
  std::shared_ptr<const storage::ChunkBatch> chunk = batch(piece);
  if (piece.whole(chunk->rows)) return chunk;
  return std::make_shared<const storage::ChunkBatch>(slice_of(*chunk, piece.begin, piece.end));
}

}  // namespace tally::executor
