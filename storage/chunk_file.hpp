#pragma once
// One column of one chunk on disk (DESIGN.md section 4), in its file or, for
// a small chunk, as a blob in the catalog (the same bytes):
//   header  "TLYC", format version, type OID, typmod, rows, data bytes,
//           validity bytes (all little-endian; 40 bytes); version 4 adds
//           the stored width of a distance in bytes, a decimal exponent
//           (float8), the frame's reference (int64), the bits a distance is
//           stored in and 4 zero bytes: 24 bytes (version 3: the first 16)
//   data    rows values: natively (text: int32 codes) or, from version 3, as
//           distances from the reference: of the values
//           (storage/frame_encoding.hpp) or, for float8, of the integers
//           value * 10^exponent (storage/decimal_float.hpp); version 3 in
//           the width's whole bytes, version 4 bit-packed in `bits` bits
//           each (storage/bit_packing.hpp)
//   validity  bitmap, bit i set = row i non-NULL; absent when no NULLs
//   footer  CRC32C of everything before it (the stored bytes, as written)
// A file whose header, length or checksum does not match is corrupted and is
// never returned as data.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "storage/column_vector.hpp"

namespace tally::storage {

// Version 1: every column. Version 2: numeric columns wider than int64
// (int128 slots, see storage_width(SqlType)); a reader that predates them
// stops at the version instead of reading 16- or 24-byte slots as int64.
// Version 3: integer-like columns (frame_native_width(type) != 0) in their
// frame-of-reference form, float8 in decimal form where the chunk has one.
// Version 4: the same, the distances bit-packed. Version-1 and version-3
// files of those types stay readable.
constexpr uint32_t chunk_file_format_version = 4;
// The version a column of this type is written with (float4 keeps version 1
// and wide numerics version 2, so their files read as before).
uint32_t chunk_file_version_for(SqlType type);

// Writes column to path; fsyncs it when sync (callers that write several
// files may write them all first and sync_file() each afterwards).
void write_chunk_file(const std::string& path, const ColumnVector& column, bool sync = true);

// The bytes write_chunk_file writes, in memory: a small chunk's columns are
// kept in the catalog instead of files (TableAppender).
std::vector<uint8_t> encode_chunk_bytes(const ColumnVector& column);
// Writes bytes of encode_chunk_bytes as a chunk column file.
void write_chunk_bytes(const std::string& path, std::span<const uint8_t> bytes, bool sync);

// Reads a chunk column file. `what` names it in errors ("chunk 3 of table
// \"t\" column \"x\""): a missing, truncated or corrupted file throws
// Error(XX001 data_corrupted). The result has no dictionary set; its values
// are native whatever the stored form.
ColumnVector read_chunk_file(const std::string& path, SqlType type, uint64_t expected_rows, const std::string& what);
// The same for a column's bytes kept in the catalog.
ColumnVector read_chunk_bytes(std::span<const uint8_t> bytes, SqlType type, uint64_t expected_rows,
                              const std::string& what);

}  // namespace tally::storage
