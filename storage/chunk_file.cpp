#include "storage/chunk_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/error.hpp"
#include "storage/column_layout.hpp"
#include "storage/crc32c.hpp"
#include "storage/decimal_float.hpp"
#include "storage/file_io.hpp"
#include "storage/frame_encoding.hpp"

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

// Follows Header in version 3.
struct FrameHeader {
  uint32_t width;
  uint32_t exponent;  // float8 in decimal form: values are integers / 10^exponent; 0 otherwise
  int64_t reference;
};
static_assert(sizeof(FrameHeader) == 16);

constexpr char magic[4] = {'T', 'L', 'Y', 'C'};
constexpr uint32_t frame_version = 3;

// Rows a frame-encoded column is encoded or decoded at a time: a block of
// at most 256 KiB stays in a core's cache between encoding and write(2).
constexpr size_t rows_per_block = size_t{1} << 16;

[[noreturn]] void corrupted(const std::string& what, const std::string& path, std::string_view why) {
  throw Error(SqlState::data_corrupted,
              "could not read " + what + ": " + std::string(why) + " in file \"" + path + "\"");
}

std::vector<uint8_t> validity_bits(const ColumnVector& column) {
  std::vector<uint8_t> bits;
  if (!column.has_nulls()) return bits;
  bits.assign((column.rows + 7) / 8, 0);
  for (size_t i = 0; i < column.rows; ++i)
    if (column.validity[i]) bits[i >> 3] |= static_cast<uint8_t>(1u << (i & 7));
  return bits;
}

// Types written in version 3 (earlier writers wrote them in version 1).
bool framed_type(SqlType type) { return frame_native_width(type) != 0 || type.id == TypeId::float8; }

// The version a file of this type may have been written with by this or an
// earlier writer.
bool readable_version(SqlType type, uint32_t version) {
  if (framed_type(type)) return version == frame_version || version == 1;
  return version == chunk_file_version_for(type);
}

// The stored form of column: its frame (frame_encoding.hpp), or for float8
// its decimal frame (decimal_float.hpp) when it has one, else native.
DecimalFrame choose_stored_form(const ColumnVector& column) {
  const auto native = static_cast<uint32_t>(storage_width(column.type));
  if (column.type.id == TypeId::float8) {
    if (auto decimal = choose_decimal_frame(column)) return *decimal;
    return DecimalFrame{0, Frame{0, native}};
  }
  return DecimalFrame{0, choose_frame(column)};
}

bool valid_stored_form(SqlType type, const DecimalFrame& form) {
  const auto native = static_cast<uint32_t>(storage_width(type));
  if (form.frame.width == native && form.frame.reference == 0 && form.exponent == 0) return true;
  if (type.id == TypeId::float8) return valid_decimal_frame(form);
  return form.exponent == 0 && valid_frame(type, form.frame);
}

}  // namespace

uint32_t chunk_file_version_for(SqlType type) {
  if (framed_type(type)) return frame_version;
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
  const std::vector<uint8_t> bits = validity_bits(column);
  h.validity_bytes = bits.size();
  FrameHeader frame_header{};
  DecimalFrame form{0, Frame{0, static_cast<uint32_t>(storage_width(column.type))}};
  if (h.version == frame_version) {
    form = choose_stored_form(column);
    frame_header.width = form.frame.width;
    frame_header.exponent = form.exponent;
    frame_header.reference = form.frame.reference;
    h.data_bytes = column.rows * form.frame.width;
  }
  const Frame frame = form.frame;
  const bool framed = frame.width != static_cast<uint32_t>(storage_width(column.type));
  const size_t frame_bytes = h.version == frame_version ? sizeof frame_header : 0;
  File f = File::create(path);
  uint32_t crc = crc32c(0, &h, sizeof h);
  crc = crc32c(crc, &frame_header, frame_bytes);
  f.write(&h, sizeof h);
  f.write(&frame_header, frame_bytes);
  if (!framed) {
    crc = crc32c(crc, column.data.data(), column.data.size());
    f.write(column.data.data(), column.data.size());
  } else if (frame.width != 0) {
    // Encoded a block at a time into a buffer that stays in cache, and
    // checksummed there: no second copy of the column in memory.
    std::vector<uint8_t> block(std::min<size_t>(column.rows, rows_per_block) * frame.width);
    for (size_t begin = 0; begin < column.rows; begin += rows_per_block) {
      const size_t count = std::min(rows_per_block, column.rows - begin);
      if (column.type.id == TypeId::float8) encode_decimal(column, form, begin, count, block.data());
      else encode_frame(column, frame, begin, count, block.data());
      crc = crc32c(crc, block.data(), count * frame.width);
      f.write(block.data(), count * frame.width);
    }
  }
  crc = crc32c(crc, bits.data(), bits.size());
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
  if (!readable_version(type, h.version))
    corrupted(what, path, "unsupported format version " + std::to_string(h.version));
  const size_t native = static_cast<size_t>(storage_width(type));
  FrameHeader frame_header{0, 0, 0};
  frame_header.width = static_cast<uint32_t>(native);
  const size_t frame_bytes = h.version == frame_version ? sizeof frame_header : 0;
  if (frame_bytes != 0 && !f.read_exact(&frame_header, sizeof frame_header)) corrupted(what, path, "file is truncated");
  const DecimalFrame form{frame_header.exponent, Frame{frame_header.reference, frame_header.width}};
  const Frame frame = form.frame;
  // The form is checked here, before the checksum, only so that the sizes
  // below are sane; the checksum then vouches for the stored bytes.
  if (frame_bytes != 0 && !valid_stored_form(type, form)) corrupted(what, path, "header has an invalid stored width");
  if (h.type_oid != type_oid(type.id) || h.rows != expected_rows || h.data_bytes != h.rows * frame.width ||
      (h.validity_bytes != 0 && h.validity_bytes != (h.rows + 7) / 8))
    corrupted(what, path, "header does not match the catalog");
  const size_t expected_size = sizeof h + frame_bytes + h.data_bytes + h.validity_bytes + sizeof(uint32_t);
  if (file_size != expected_size)
    corrupted(what, path, file_size < expected_size ? "file is truncated" : "file has trailing bytes");
  ColumnVector col;
  col.type = type;
  col.rows = h.rows;
  col.data.resize(h.rows * native);
  uint32_t crc = crc32c(0, &h, sizeof h);
  crc = crc32c(crc, &frame_header, frame_bytes);
  if (frame.width == native) {
    if (!f.read_exact(col.data.data(), col.data.size())) corrupted(what, path, "file is truncated");
    crc = crc32c(crc, col.data.data(), col.data.size());
  } else {
    // Read, checksummed and decoded a block at a time (see write_chunk_file);
    // nothing is returned before the whole file's checksum matched.
    std::vector<uint8_t> block(std::min<size_t>(col.rows, rows_per_block) * frame.width);
    for (size_t begin = 0; begin < col.rows; begin += rows_per_block) {
      const size_t count = std::min(rows_per_block, col.rows - begin);
      if (!f.read_exact(block.data(), count * frame.width)) corrupted(what, path, "file is truncated");
      crc = crc32c(crc, block.data(), count * frame.width);
      if (type.id == TypeId::float8) decode_decimal(block.data(), form, begin, count, col);
      else decode_frame(block.data(), frame, begin, count, col);
    }
  }
  std::vector<uint8_t> bits(h.validity_bytes);
  uint32_t stored_crc = 0;
  if (!f.read_exact(bits.data(), bits.size()) || !f.read_exact(&stored_crc, sizeof stored_crc))
    corrupted(what, path, "file is truncated");
  crc = crc32c(crc, bits.data(), bits.size());
  if (crc != stored_crc) corrupted(what, path, "checksum mismatch");
  if (!bits.empty()) {
    col.validity.resize(col.rows);
    for (size_t i = 0; i < col.rows; ++i) col.validity[i] = (bits[i >> 3] >> (i & 7)) & 1;
  }
  if (frame.width != native) zero_null_values(col);
  return col;
}

}  // namespace tally::storage
