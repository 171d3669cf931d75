#include "storage/chunk_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>

#include "common/error.hpp"
#include "storage/bit_packing.hpp"
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

// Follows Header in versions 3 (its first 16 bytes) and 4.
struct FrameHeader {
  uint32_t width;
  uint32_t exponent;  // float8 in decimal form: values are integers / 10^exponent; 0 otherwise
  int64_t reference;
  uint32_t bits;      // version 4: bits per stored distance (bit_packing.hpp); 0 when native
  uint32_t reserved;  // 0
};
static_assert(sizeof(FrameHeader) == 24);
constexpr size_t byte_frame_header_bytes = 16;

constexpr char magic[4] = {'T', 'L', 'Y', 'C'};
constexpr uint32_t byte_frame_version = 3;  // distances in whole bytes
constexpr uint32_t frame_version = 4;       // distances bit-packed

// Rows a frame-encoded column is encoded or decoded at a time: a block of
// at most 256 KiB stays in a core's cache between encoding and write(2).
constexpr size_t rows_per_block = size_t{1} << 16;

// `where` names the stored bytes: a file ("file \"path\"") or the catalog.
[[noreturn]] void corrupted(const std::string& what, const std::string& where, std::string_view why) {
  throw Error(SqlState::data_corrupted, "could not read " + what + ": " + std::string(why) + " in " + where);
}

std::string file_place(const std::string& path) { return "file \"" + path + "\""; }

// The bytes of a chunk column kept in the catalog, read as a file is.
class ByteSource {
 public:
  explicit ByteSource(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  size_t size() const { return bytes_.size(); }
  bool read_exact(void* data, size_t size) {
    if (size > bytes_.size() - at_) return false;
    if (size != 0) std::memcpy(data, bytes_.data() + at_, size);
    at_ += size;
    return true;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

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
  if (framed_type(type)) return version == frame_version || version == byte_frame_version || version == 1;
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

// Bits a stored distance takes: a version-3 frame's whole bytes, a
// version-4 frame's bits (none where stored natively).
uint32_t stored_bits(uint32_t version, const Frame& frame, uint32_t native) {
  if (frame.width == native) return 8 * native;
  return version == byte_frame_version ? 8 * frame.width : frame.bits;
}

// Whether a version-4 frame's bits are those the writer gives its width:
// more than the next narrower width holds, at most this one's.
bool valid_bits(const Frame& frame, uint32_t native) {
  if (frame.width == native || frame.width == 0) return frame.bits == 0;
  return frame.bits > 8 * (frame.width - 1) && frame.bits <= 8 * frame.width;
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

namespace {

// The stored bytes of column, handed to out(data, size) in order.
template <class Out>
void encode_chunk(const ColumnVector& column, Out&& out) {
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
  const auto native = static_cast<uint32_t>(storage_width(column.type));
  DecimalFrame form{0, Frame{0, native}};
  if (h.version == frame_version) {
    form = choose_stored_form(column);
    frame_header.width = form.frame.width;
    frame_header.exponent = form.exponent;
    frame_header.reference = form.frame.reference;
    frame_header.bits = form.frame.width == native ? 0 : form.frame.bits;
    if (form.frame.width != native) h.data_bytes = packed_bytes(column.rows, form.frame.bits);
  }
  const Frame frame = form.frame;
  const bool framed = frame.width != native;
  const size_t frame_bytes = h.version == frame_version ? sizeof frame_header : 0;
  uint32_t crc = crc32c(0, &h, sizeof h);
  crc = crc32c(crc, &frame_header, frame_bytes);
  out(&h, sizeof h);
  out(&frame_header, frame_bytes);
  if (!framed) {
    crc = crc32c(crc, column.data.data(), column.data.size());
    out(column.data.data(), column.data.size());
  } else if (frame.width != 0) {
    // Encoded and packed a block at a time into buffers that stay in cache,
    // and checksummed there: no second copy of the column in memory. A
    // block's rows are a multiple of 8, so each starts on a whole byte.
    const size_t block_rows = std::min<size_t>(column.rows, rows_per_block);
    std::vector<uint8_t> distances(block_rows * frame.width);
    std::vector<uint8_t> packed(packed_bytes(block_rows, frame.bits));
    for (size_t begin = 0; begin < column.rows; begin += rows_per_block) {
      const size_t count = std::min(rows_per_block, column.rows - begin);
      if (column.type.id == TypeId::float8) encode_decimal(column, form, begin, count, distances.data());
      else encode_frame(column, frame, begin, count, distances.data());
      pack_bits(distances.data(), frame.width, count, frame.bits, packed.data());
      const size_t bytes = packed_bytes(count, frame.bits);
      crc = crc32c(crc, packed.data(), bytes);
      out(packed.data(), bytes);
    }
  }
  crc = crc32c(crc, bits.data(), bits.size());
  out(bits.data(), bits.size());
  out(&crc, sizeof crc);
}

// Decodes the stored bytes of a chunk column from f (a File or a
// ByteSource); `where` names them in errors.
template <class Source>
ColumnVector decode_chunk(Source& f, const std::string& where, SqlType type, uint64_t expected_rows,
                          const std::string& what) {
  const size_t file_size = f.size();
  Header h{};
  if (!f.read_exact(&h, sizeof h)) corrupted(what, where, "file is truncated");
  if (std::memcmp(h.magic, magic, 4) != 0) corrupted(what, where, "bad magic number");
  if (!readable_version(type, h.version))
    corrupted(what, where, "unsupported format version " + std::to_string(h.version));
  const size_t native = static_cast<size_t>(storage_width(type));
  FrameHeader frame_header{};
  frame_header.width = static_cast<uint32_t>(native);
  const size_t frame_bytes = h.version == frame_version        ? sizeof frame_header
                             : h.version == byte_frame_version ? byte_frame_header_bytes
                                                               : 0;
  if (frame_bytes != 0 && !f.read_exact(&frame_header, frame_bytes)) corrupted(what, where, "file is truncated");
  const DecimalFrame form{frame_header.exponent, Frame{frame_header.reference, frame_header.width, frame_header.bits}};
  const Frame frame = form.frame;
  // The form is checked here, before the checksum, only so that the sizes
  // below are sane; the checksum then vouches for the stored bytes.
  if (frame_bytes != 0 && !valid_stored_form(type, form)) corrupted(what, where, "header has an invalid stored width");
  if (h.version == frame_version && (!valid_bits(frame, static_cast<uint32_t>(native)) || frame_header.reserved != 0))
    corrupted(what, where, "header has an invalid stored width");
  const uint32_t value_bits = stored_bits(h.version, frame, static_cast<uint32_t>(native));
  if (h.type_oid != type_oid(type.id) || h.rows != expected_rows || h.data_bytes != packed_bytes(h.rows, value_bits) ||
      (h.validity_bytes != 0 && h.validity_bytes != (h.rows + 7) / 8))
    corrupted(what, where, "header does not match the catalog");
  const size_t expected_size = sizeof h + frame_bytes + h.data_bytes + h.validity_bytes + sizeof(uint32_t);
  if (file_size != expected_size)
    corrupted(what, where, file_size < expected_size ? "file is truncated" : "file has trailing bytes");
  ColumnVector col;
  col.type = type;
  col.rows = h.rows;
  col.data.resize(h.rows * native);
  uint32_t crc = crc32c(0, &h, sizeof h);
  crc = crc32c(crc, &frame_header, frame_bytes);
  if (frame.width == native) {
    if (!f.read_exact(col.data.data(), col.data.size())) corrupted(what, where, "file is truncated");
    crc = crc32c(crc, col.data.data(), col.data.size());
  } else {
    // Read, checksummed, unpacked and decoded a block at a time (see
    // write_chunk_file); nothing is returned before the whole file's
    // checksum matched.
    const size_t block_rows = std::min<size_t>(col.rows, rows_per_block);
    std::vector<uint8_t> block(packed_bytes(block_rows, value_bits) + packed_slack_bytes);
    std::vector<uint8_t> distances(value_bits == 8 * frame.width ? 0 : block_rows * frame.width);
    for (size_t begin = 0; begin < col.rows; begin += rows_per_block) {
      const size_t count = std::min(rows_per_block, col.rows - begin);
      const size_t bytes = packed_bytes(count, value_bits);
      if (!f.read_exact(block.data(), bytes)) corrupted(what, where, "file is truncated");
      crc = crc32c(crc, block.data(), bytes);
      const uint8_t* in = block.data();
      if (!distances.empty()) {
        unpack_bits(block.data(), value_bits, count, frame.width, distances.data());
        in = distances.data();
      }
      if (type.id == TypeId::float8) decode_decimal(in, form, begin, count, col);
      else decode_frame(in, frame, begin, count, col);
    }
  }
  std::vector<uint8_t> bits(h.validity_bytes);
  uint32_t stored_crc = 0;
  if (!f.read_exact(bits.data(), bits.size()) || !f.read_exact(&stored_crc, sizeof stored_crc))
    corrupted(what, where, "file is truncated");
  crc = crc32c(crc, bits.data(), bits.size());
  if (crc != stored_crc) corrupted(what, where, "checksum mismatch");
  if (!bits.empty()) {
    col.validity.resize(col.rows);
    for (size_t i = 0; i < col.rows; ++i) col.validity[i] = (bits[i >> 3] >> (i & 7)) & 1;
  }
  if (frame.width != native) zero_null_values(col);
  return col;
}

// Ends a chunk file's write: synced now, or its writeback started (the
// caller syncs later, or at COMMIT: its wait starts now).
void finish_write(File& f, bool sync) {
  if (sync) f.sync();
  else f.start_writeback();
}

}  // namespace

void write_chunk_file(const std::string& path, const ColumnVector& column, bool sync) {
  File f = File::create(path);
  encode_chunk(column, [&](const void* data, size_t size) { f.write(data, size); });
  finish_write(f, sync);
}

std::vector<uint8_t> encode_chunk_bytes(const ColumnVector& column) {
  std::vector<uint8_t> bytes;
  encode_chunk(column, [&](const void* data, size_t size) {
    const auto* from = static_cast<const uint8_t*>(data);
    bytes.insert(bytes.end(), from, from + size);
  });
  return bytes;
}

void write_chunk_bytes(const std::string& path, std::span<const uint8_t> bytes, bool sync) {
  File f = File::create(path);
  f.write(bytes.data(), bytes.size());
  finish_write(f, sync);
}

ColumnVector read_chunk_file(const std::string& path, SqlType type, uint64_t expected_rows, const std::string& what) {
  File f = [&] {
    try {
      return File::read_only(path);
    } catch (const Error& e) {
      corrupted(what, file_place(path), "file is missing");
    }
  }();
  return decode_chunk(f, file_place(path), type, expected_rows, what);
}

ColumnVector read_chunk_bytes(std::span<const uint8_t> bytes, SqlType type, uint64_t expected_rows,
                              const std::string& what) {
  ByteSource source(bytes);
  return decode_chunk(source, "the catalog", type, expected_rows, what);
}

}  // namespace tally::storage
