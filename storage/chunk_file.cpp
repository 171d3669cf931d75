#include "storage/chunk_file.hpp"

#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "storage/column_layout.hpp"
#include "storage/crc32c.hpp"
#include "storage/file_io.hpp"

namespace tally::storage {
namespace {

struct Header {
  char magic[4];
  uint32_t version;
  uint32_t type_oid;
  int32_t typmod;
  uint64_t rows;
  uint64_t data_bytes;
  uint64_t validity_bytes;
};
static_assert(sizeof(Header) == 40);

constexpr char magic[4] = {'T', 'L', 'Y', 'C'};

[[noreturn]] void corrupted(const std::string& what, const std::string& path, std::string_view why) {
  throw Error(SqlState::data_corrupted,
              "could not read " + what + ": " + std::string(why) + " in file \"" + path + "\"");
}

}  // namespace

uint32_t chunk_file_version_for(SqlType type) {
  return type.id == TypeId::numeric && storage_width(type) != 8 ? 2 : 1;
}

void write_chunk_file(const std::string& path, const ColumnVector& column, bool sync) {
  Header h{};
  std::memcpy(h.magic, magic, 4);
  h.version = chunk_file_version_for(column.type);
  h.type_oid = type_oid(column.type.id);
  h.typmod = column.type.typmod;
  h.rows = column.rows;
  h.data_bytes = column.data.size();
  std::vector<uint8_t> bits;
  if (column.has_nulls()) {
    bits.assign((column.rows + 7) / 8, 0);
    for (size_t i = 0; i < column.rows; ++i)
      if (column.validity[i]) bits[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
  }
  h.validity_bytes = bits.size();
  uint32_t crc = crc32c(0, &h, sizeof h);
  crc = crc32c(crc, column.data.data(), column.data.size());
  crc = crc32c(crc, bits.data(), bits.size());
  File f = File::create(path);
  f.write(&h, sizeof h);
  f.write(column.data.data(), column.data.size());
  f.write(bits.data(), bits.size());
  f.write(&crc, sizeof crc);
  if (sync) f.sync();
  else f.start_writeback();  // the caller syncs later (or at COMMIT): its wait starts now
}

ColumnVector read_chunk_file(const std::string& path, SqlType type, uint64_t expected_rows, const std::string& what) {
  File f = [&] {
    try {
      return File::read_only(path);
    } catch (const Error& e) {
      corrupted(what, path, "file is missing");
    }
  }();
  const size_t file_size = f.size();
  Header h{};
  if (!f.read_exact(&h, sizeof h)) corrupted(what, path, "file is truncated");
  if (std::memcmp(h.magic, magic, 4) != 0) corrupted(what, path, "bad magic number");
  if (h.version != chunk_file_version_for(type))
    corrupted(what, path, "unsupported format version " + std::to_string(h.version));
  const size_t width = static_cast<size_t>(storage_width(type));
  if (h.type_oid != type_oid(type.id) || h.rows != expected_rows || h.data_bytes != h.rows * width ||
      (h.validity_bytes != 0 && h.validity_bytes != (h.rows + 7) / 8))
    corrupted(what, path, "header does not match the catalog");
  if (file_size != sizeof h + h.data_bytes + h.validity_bytes + sizeof(uint32_t))
    corrupted(what, path, file_size < sizeof h + h.data_bytes + h.validity_bytes + 4 ? "file is truncated"
                                                                                         : "file has trailing bytes");
  ColumnVector col;
  col.type = type;
  col.rows = h.rows;
  col.data.resize(h.data_bytes);
  std::vector<uint8_t> bits(h.validity_bytes);
  uint32_t stored_crc = 0;
  if (!f.read_exact(col.data.data(), col.data.size()) || !f.read_exact(bits.data(), bits.size()) ||
      !f.read_exact(&stored_crc, sizeof stored_crc))
    corrupted(what, path, "file is truncated");
  uint32_t crc = crc32c(0, &h, sizeof h);
  crc = crc32c(crc, col.data.data(), col.data.size());
  crc = crc32c(crc, bits.data(), bits.size());
  if (crc != stored_crc) corrupted(what, path, "checksum mismatch");
  if (!bits.empty()) {
    col.validity.resize(col.rows);
    for (size_t i = 0; i < col.rows; ++i) col.validity[i] = (bits[i >> 3] >> (i & 7)) & 1;
  }
  return col;
}

}  // namespace tally::storage
