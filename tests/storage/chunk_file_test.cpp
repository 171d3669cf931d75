// Chunk column files: every integer-like type in every stored width of its
// frame-of-reference form (storage/frame_encoding.hpp), the edges of each
// width, the distances' bit packing (storage/bit_packing.hpp), NULLs,
// old-version files and corruption.
#include "storage/chunk_file.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "common/error.hpp"
#include "storage/column_layout.hpp"
#include "storage/crc32c.hpp"
#include "storage/frame_encoding.hpp"

namespace tally::storage {
namespace {

namespace fs = std::filesystem;

constexpr size_t header_bytes = 40;
constexpr size_t frame_header_bytes = 24;

class ChunkFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tally_chunk_file_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name = "c") const { return (dir_ / name).string(); }

  fs::path dir_;
};

// A column of type with the given values (as int64, cast to the native
// type); a row whose entry in nulls is true is NULL, its slot left as
// null_slot (the appender leaves 0; other writers may not).
ColumnVector column(SqlType type, const std::vector<int64_t>& values, const std::vector<bool>& nulls = {},
                    int64_t null_slot = 0) {
  ColumnVector col;
  col.type = type;
  col.rows = values.size();
  const size_t width = static_cast<size_t>(storage_width(type));
  col.data.resize(col.rows * width);
  bool any_null = false;
  for (const bool n : nulls) any_null = any_null || n;
  if (any_null) col.validity.assign(col.rows, 1);
  for (size_t i = 0; i < col.rows; ++i) {
    const bool null = i < nulls.size() && nulls[i];
    if (null) col.validity[i] = 0;
    const int64_t v = null ? null_slot : values[i];
    std::memcpy(col.data.data() + i * width, &v, width);  // little-endian: the low bytes
  }
  return col;
}

// A uint32 of the file at `offset`.
uint32_t read_u32(const std::string& file, size_t offset) {
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  uint32_t v = 0;
  in.read(reinterpret_cast<char*>(&v), sizeof v);
  return v;
}

// The bytes of the file's stored values (the file less its header, frame
// header, bitmap and checksum).
size_t payload_of(const std::string& file, const ColumnVector& col) {
  const size_t bitmap = col.has_nulls() ? (col.rows + 7) / 8 : 0;
  return fs::file_size(file) - header_bytes - frame_header_bytes - bitmap - 4;
}

// The bits a distance is stored in, as the frame header says.
uint32_t stored_bits_of(const std::string& file) { return read_u32(file, header_bytes + 16); }

// The stored width of a value in bytes, as the frame header says, after
// checking the file holds the values in the bits it says (a natively stored
// column in its whole bytes).
size_t stored_width_of(const std::string& file, const ColumnVector& col) {
  const uint32_t width = read_u32(file, header_bytes);
  const uint32_t bits = width == static_cast<uint32_t>(storage_width(col.type)) ? 8 * width : stored_bits_of(file);
  EXPECT_LE(bits, 8 * width);
  EXPECT_EQ(payload_of(file, col), (col.rows * bits + 7) / 8) << "bits " << bits;
  return width;
}

// Writes col, reads it back, checks every value and NULL, and returns the
// stored width of a value (from the file's size).
size_t round_trip(const std::string& file, const ColumnVector& col) {
  write_chunk_file(file, col);
  const ColumnVector back = read_chunk_file(file, col.type, col.rows, "test column");
  EXPECT_EQ(back.rows, col.rows);
  EXPECT_EQ(back.validity, col.validity);
  const size_t width = static_cast<size_t>(storage_width(col.type));
  EXPECT_EQ(back.data.size(), col.rows * width);
  for (size_t i = 0; i < col.rows && i * width < back.data.size(); ++i) {
    if (col.is_null(i)) continue;
    EXPECT_EQ(std::memcmp(back.data.data() + i * width, col.data.data() + i * width, width), 0)
        << "row " << i << " of type oid " << type_oid(col.type.id);
  }
  return stored_width_of(file, col);
}

struct TypeCase {
  SqlType type;
  int64_t min, max;  // the type's range of stored values
};

std::vector<TypeCase> integer_like_types() {
  constexpr int64_t i16 = std::numeric_limits<int16_t>::max(), i32 = std::numeric_limits<int32_t>::max();
  constexpr int64_t i64_min = std::numeric_limits<int64_t>::min(), i64 = std::numeric_limits<int64_t>::max();
  return {
      {{TypeId::boolean}, 0, 1},
      {{TypeId::int2}, -i16 - 1, i16},
      {{TypeId::int4}, -i32 - 1, i32},
      {{TypeId::date}, -i32 - 1, i32},
      {{TypeId::text}, 0, i32},  // dictionary codes
      {{TypeId::varchar, 14}, 0, i32},
      {{TypeId::bpchar, 8}, 0, i32},
      {{TypeId::bytea}, 0, i32},
      {{TypeId::int8}, i64_min, i64},
      {{TypeId::time}, 0, 86400000000},
      {{TypeId::timestamp}, i64_min, i64},
      {{TypeId::timestamptz}, i64_min, i64},
      {SqlType::numeric(18, 2), -999999999999999999, 999999999999999999},
  };
}

TEST_F(ChunkFileTest, EveryIntegerLikeTypeInEveryWidth) {
  for (const TypeCase& t : integer_like_types()) {
    SCOPED_TRACE("type oid " + std::to_string(type_oid(t.type.id)));
    const uint32_t native = frame_native_width(t.type);
    ASSERT_EQ(native, static_cast<uint32_t>(storage_width(t.type)));
    // The widest range each stored width holds, and one more.
    for (const uint32_t width : {0u, 1u, 2u, 3u, 4u}) {
      if (width >= native) continue;
      const uint64_t span = width == 0 ? 0 : (uint64_t{1} << (8 * width)) - 1;
      if (static_cast<uint64_t>(t.max) - static_cast<uint64_t>(t.min) <= span) continue;
      // At both ends of the type's range: distances in the unsigned type must wrap right.
      for (const int64_t lo : {t.min, static_cast<int64_t>(static_cast<uint64_t>(t.max) - span), int64_t{0}}) {
        const int64_t hi = static_cast<int64_t>(static_cast<uint64_t>(lo) + span);
        EXPECT_EQ(round_trip(path(), column(t.type, {hi, lo, lo, hi, lo})), width) << "lo " << lo;
        if (hi < t.max) {
          const size_t wider = width == 0 ? 1 : width == 2 ? 3 : width == 3 ? 4 : width * 2;
          EXPECT_EQ(round_trip(path(), column(t.type, {lo, hi + 1, lo})), std::min<size_t>(wider, native))
              << "lo " << lo;
        }
      }
    }
    // The whole range of the type: stored natively.
    EXPECT_EQ(round_trip(path(), column(t.type, {t.min, t.max, 0})), native);
  }
}

TEST_F(ChunkFileTest, NullsOneRowAllNullAndNoRows) {
  for (const TypeCase& t : integer_like_types()) {
    SCOPED_TRACE("type oid " + std::to_string(type_oid(t.type.id)));
    // NULL rows are not part of the range: the type's extremes in NULL rows
    // around two values 1 apart (0 and 1 for bool: its native byte).
    const int64_t below = t.max - 1;
    EXPECT_EQ(round_trip(path(), column(t.type, {t.min, below, t.max, t.max}, {true, false, true, false})), 1u);
    EXPECT_EQ(round_trip(path(), column(t.type, {1, 0, 1, 1, 0, 1, 1, 1, 1}, {false, true, false, false, true})), 0u);
    EXPECT_EQ(round_trip(path(), column(t.type, {t.max})), 0u);
    EXPECT_EQ(round_trip(path(), column(t.type, {t.min})), 0u);
    EXPECT_EQ(round_trip(path(), column(t.type, {0, 0, 0}, {true, true, true})), 0u);
    EXPECT_EQ(round_trip(path(), column(t.type, {})), 0u);
  }
}

TEST_F(ChunkFileTest, NullSlotsReadAsZero) {
  // A writer that left other bytes in a NULL row's slot: the frame does not
  // store them and the reader gives 0, as the appender writes.
  const ColumnVector col = column({TypeId::int8}, {100, 5, 101, 102}, {false, true, false, false}, -77777777);
  write_chunk_file(path(), col);
  const ColumnVector back = read_chunk_file(path(), col.type, col.rows, "test column");
  EXPECT_EQ(back.values<int64_t>()[0], 100);
  EXPECT_EQ(back.values<int64_t>()[1], 0);
  EXPECT_EQ(back.values<int64_t>()[3], 102);
  EXPECT_EQ(stored_width_of(path(), col), 1u);
}

// The largest distance's bits, every distance packed in them: 7 bits for a
// hundred values, 20 for a million, 1 for two.
TEST_F(ChunkFileTest, DistancesPackedInTheBitsOfTheLargest) {
  struct Case {
    SqlType type;
    int64_t lo, span;
    uint32_t bits;
  };
  for (const Case& c : {Case{{TypeId::int4}, 1, 99, 7}, Case{{TypeId::int4}, 5, 1, 1}, Case{{TypeId::int4}, -7, 128, 8},
                        Case{{TypeId::text}, 0, 999999, 20}, Case{{TypeId::int8}, -(int64_t{1} << 40), 4095, 12},
                        Case{{TypeId::int8}, 3, (int64_t{1} << 31) + 5, 32}, Case{{TypeId::int2}, -100, 100, 7},
                        Case{{TypeId::date}, 7000, (1 << 17) + 1, 18}}) {
    SCOPED_TRACE("type oid " + std::to_string(type_oid(c.type.id)) + " span " + std::to_string(c.span));
    for (const size_t rows : {size_t{1}, size_t{7}, size_t{9}, size_t{1000}, (size_t{1} << 16) + 3}) {
      std::vector<int64_t> values(rows);
      std::vector<bool> nulls(rows);
      for (size_t i = 0; i < rows; ++i) {
        values[i] = c.lo + static_cast<int64_t>((i * 2654435761u) % static_cast<uint64_t>(c.span + 1));
        nulls[i] = rows > 9 && i % 97 == 5;
      }
      values[rows - 1] = c.lo + c.span;  // the largest distance
      if (rows > 1) values[0] = c.lo;
      nulls[rows - 1] = false;
      if (rows > 1) nulls[0] = false;
      round_trip(path(), column(c.type, values, nulls));
      EXPECT_EQ(stored_bits_of(path()), rows == 1 ? 0u : c.bits) << rows << " rows";
    }
  }
  // H2O's v3 (four digits under 100): 20 bits of a 3-byte width.
  std::vector<double> v3;
  for (int i = 0; i <= 1000; ++i) v3.push_back((i * 999999 / 1000) / 10000.0);
  write_chunk_file(path(), [&] {
    ColumnVector col;
    col.type = {TypeId::float8};
    col.rows = v3.size();
    col.data.resize(v3.size() * 8);
    std::memcpy(col.data.data(), v3.data(), col.data.size());
    return col;
  }());
  EXPECT_EQ(stored_bits_of(path()), 20u);
  const ColumnVector back = read_chunk_file(path(), {TypeId::float8}, v3.size(), "f");
  EXPECT_EQ(std::memcmp(back.data.data(), v3.data(), v3.size() * 8), 0);
}

TEST_F(ChunkFileTest, ManyRowsAcrossBlocks) {
  // Several of the writer's and reader's blocks, with a NULL now and then.
  const size_t rows = (size_t{1} << 17) + 12345;
  std::vector<int64_t> values(rows);
  std::vector<bool> nulls(rows);
  for (size_t i = 0; i < rows; ++i) {
    values[i] = -40000 + static_cast<int64_t>((i * 2654435761u) % 60000);
    nulls[i] = i % 1000 == 7;
  }
  EXPECT_EQ(round_trip(path(), column({TypeId::int4}, values, nulls)), 2u);
  EXPECT_EQ(round_trip(path(), column({TypeId::int8}, values)), 2u);
}

TEST_F(ChunkFileTest, ExtremesAnywhereInALongColumn) {
  // The range is taken a vector register at a time: an extreme in the first
  // register, in the middle, or in the scalar tail must all count.
  for (const TypeCase& t : integer_like_types()) {
    SCOPED_TRACE("type oid " + std::to_string(type_oid(t.type.id)));
    const int64_t base = t.min + 1;
    for (const size_t at : {size_t{0}, size_t{1}, size_t{31}, size_t{32}, size_t{500}, size_t{998}, size_t{999}}) {
      std::vector<int64_t> values(1000, base);
      values[at] = t.min;
      values[(at + 7) % values.size()] = t.max;
      EXPECT_EQ(round_trip(path(), column(t.type, values)), static_cast<size_t>(storage_width(t.type))) << at;
      if (t.max - base < 200) continue;  // bool
      values.assign(values.size(), base);
      values[at] = base + 200;  // one byte
      EXPECT_EQ(round_trip(path(), column(t.type, values)), 1u) << at;
    }
  }
}

ColumnVector doubles(const std::vector<double>& values, const std::vector<bool>& nulls = {}) {
  ColumnVector col;
  col.type = {TypeId::float8};
  col.rows = values.size();
  col.data.resize(values.size() * 8);
  std::memcpy(col.data.data(), values.data(), col.data.size());
  for (size_t i = 0; i < nulls.size(); ++i) {
    if (!nulls[i]) continue;
    if (col.validity.empty()) col.validity.assign(col.rows, 1);
    col.validity[i] = 0;
  }
  return col;
}

TEST_F(ChunkFileTest, Float8InDecimalFormWhereEveryValueHasOne) {
  // Values as COPY parses them from decimal text (H2O's v3: four digits).
  EXPECT_EQ(round_trip(path(), doubles({83.6498, 39.4119, 0.0001, 99.9999, 0.0})), 3u);
  EXPECT_EQ(round_trip(path(), doubles({1677.7215, 0.0})), 3u);
  EXPECT_EQ(round_trip(path(), doubles({1677.7216, 0.0})), 4u);
  EXPECT_EQ(round_trip(path(), doubles({1.0, 2.0, 250.0, 7.0})), 1u);
  EXPECT_EQ(round_trip(path(), doubles({-1.25, 3.75, 0.5, -300.0})), 2u);
  EXPECT_EQ(round_trip(path(), doubles({2.5, 2.5, 2.5})), 0u);
  EXPECT_EQ(round_trip(path(), doubles({83.6498 + 39.4119, 12.5})), 3u);  // a sum of two such values
  EXPECT_EQ(round_trip(path(), doubles({2000.0001, 12.5})), 4u);
  EXPECT_EQ(round_trip(path(), doubles({1.5, 0.0, 2.5}, {false, true, false})), 1u);
  EXPECT_EQ(round_trip(path(), doubles({0.0, 0.0}, {true, true})), 0u);
  EXPECT_EQ(round_trip(path(), doubles({})), 0u);
  // Values without such a form keep the chunk native, bit for bit.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const double odd : {0.1 + 0.2, -0.0, nan, inf, -inf, 1e300, 5e-324, 123456789.123456789, 1e-11}) {
    EXPECT_EQ(round_trip(path(), doubles({1.5, odd, 2.5})), 8u) << odd;
    ColumnVector back = read_chunk_file(path(), {TypeId::float8}, 3, "f");
    double x;
    std::memcpy(&x, back.data.data() + 8, 8);
    EXPECT_EQ(std::memcmp(&x, &odd, 8), 0) << odd;
  }
  // A value past the exponent-choosing sample that needs a larger exponent.
  std::vector<double> tail(1000, 0.5);
  tail[900] = 0.0625;
  EXPECT_EQ(round_trip(path(), doubles(tail)), 2u);
  tail[901] = 0.1 + 0.2;
  EXPECT_EQ(round_trip(path(), doubles(tail)), 8u);
  // A NULL row's slot is not stored: it reads as 0.
  ColumnVector with_null = doubles({1.5, nan, 2.5}, {false, true, false});
  write_chunk_file(path(), with_null);
  const ColumnVector back = read_chunk_file(path(), with_null.type, 3, "f");
  EXPECT_EQ(back.values<double>()[1], 0.0);
  EXPECT_EQ(back.values<double>()[2], 2.5);
}

TEST_F(ChunkFileTest, Float8ParsedFromTextRoundTripsAcrossBlocks) {
  const size_t rows = (size_t{1} << 17) + 99;
  std::vector<double> values(rows);
  std::vector<bool> nulls(rows);
  for (size_t i = 0; i < rows; ++i) {
    const std::string text = std::to_string((i * 2654435761u) % 100) + "." + std::to_string(1000 + (i * 40503u) % 9000);
    values[i] = std::strtod(text.c_str(), nullptr);
    nulls[i] = i % 777 == 3;
  }
  EXPECT_EQ(round_trip(path(), doubles(values, nulls)), 3u);  // under 100 in four digits: under 2^24
}

TEST_F(ChunkFileTest, OtherTypesKeepTheirFormat) {
  ColumnVector f4;
  f4.type = {TypeId::float4};
  f4.rows = 3;
  f4.data.resize(12);
  const float xs[3] = {1.5f, -0.0f, 1e30f};
  std::memcpy(f4.data.data(), xs, sizeof xs);
  write_chunk_file(path(), f4);
  EXPECT_EQ(fs::file_size(path()), header_bytes + 12 + 4);  // version 1: no frame header
  EXPECT_EQ(read_chunk_file(path(), f4.type, 3, "f").data, f4.data);

  ColumnVector wide;
  wide.type = SqlType::numeric(30, 2);
  wide.rows = 2;
  wide.data.assign(32, 0);
  wide.data[0] = 9;
  wide.data[31] = 0x80;
  write_chunk_file(path(), wide);
  EXPECT_EQ(fs::file_size(path()), header_bytes + 32 + 4);
  EXPECT_EQ(read_chunk_file(path(), wide.type, 2, "w").data, wide.data);
}

// A file as the version-1 writer made it: header, native values, bitmap, CRC.
void write_version_1(const std::string& file, const ColumnVector& col) {
  struct {
    char magic[4] = {'T', 'L', 'Y', 'C'};
    uint32_t version = 1;
    uint32_t type_oid;
    int32_t typmod;
    uint64_t rows, data_bytes, validity_bytes;
  } h;
  h.type_oid = type_oid(col.type.id);
  h.typmod = col.type.typmod;
  h.rows = col.rows;
  h.data_bytes = col.data.size();
  std::vector<uint8_t> bits;
  if (col.has_nulls()) {
    bits.assign((col.rows + 7) / 8, 0);
    for (size_t i = 0; i < col.rows; ++i)
      if (col.validity[i]) bits[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  h.validity_bytes = bits.size();
  static_assert(sizeof h == header_bytes);
  uint32_t crc = crc32c(0, &h, sizeof h);
  crc = crc32c(crc, col.data.data(), col.data.size());
  crc = crc32c(crc, bits.data(), bits.size());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&h), sizeof h);
  out.write(reinterpret_cast<const char*>(col.data.data()), static_cast<std::streamsize>(col.data.size()));
  out.write(reinterpret_cast<const char*>(bits.data()), static_cast<std::streamsize>(bits.size()));
  out.write(reinterpret_cast<const char*>(&crc), sizeof crc);
}

TEST_F(ChunkFileTest, VersionOneFilesStillRead) {
  for (const TypeCase& t : integer_like_types()) {
    SCOPED_TRACE("type oid " + std::to_string(type_oid(t.type.id)));
    const ColumnVector col = column(t.type, {t.min, 3, t.max, 1}, {false, true, false, false}, 3);
    write_version_1(path(), col);
    const ColumnVector back = read_chunk_file(path(), t.type, 4, "old column");
    EXPECT_EQ(back.data, col.data);  // natively stored: the NULL slot as written
    EXPECT_EQ(back.validity, col.validity);
  }
  const ColumnVector f8 = doubles({0.25, 1e300, -0.0});
  write_version_1(path(), f8);
  EXPECT_EQ(read_chunk_file(path(), f8.type, 3, "old column").data, f8.data);
}

// A file as the version-3 writer made it: the frame header's first 16 bytes
// and the distances in whole bytes of `width`.
void write_version_3(const std::string& file, SqlType type, const std::vector<uint32_t>& distances, uint32_t width,
                     int64_t reference) {
  struct {
    char magic[4] = {'T', 'L', 'Y', 'C'};
    uint32_t version = 3;
    uint32_t type_oid;
    int32_t typmod;
    uint64_t rows, data_bytes, validity_bytes = 0;
  } h;
  struct {
    uint32_t width, exponent = 0;
    int64_t reference;
  } frame;
  static_assert(sizeof h == header_bytes && sizeof frame == 16);
  h.type_oid = type_oid(type.id);
  h.typmod = type.typmod;
  h.rows = distances.size();
  h.data_bytes = distances.size() * width;
  frame.width = width;
  frame.reference = reference;
  std::vector<uint8_t> data(h.data_bytes);
  for (size_t i = 0; i < distances.size(); ++i) std::memcpy(data.data() + i * width, &distances[i], width);
  uint32_t crc = crc32c(0, &h, sizeof h);
  crc = crc32c(crc, &frame, sizeof frame);
  crc = crc32c(crc, data.data(), data.size());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&h), sizeof h);
  out.write(reinterpret_cast<const char*>(&frame), sizeof frame);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  out.write(reinterpret_cast<const char*>(&crc), sizeof crc);
}

TEST_F(ChunkFileTest, VersionThreeFilesStillRead) {
  write_version_3(path(), {TypeId::int4}, {0, 200, 100, 7}, 1, 1000);
  ColumnVector back = read_chunk_file(path(), {TypeId::int4}, 4, "old column");
  EXPECT_EQ(std::vector<int32_t>(back.values<int32_t>(), back.values<int32_t>() + 4),
            (std::vector<int32_t>{1000, 1200, 1100, 1007}));
  write_version_3(path(), {TypeId::int8}, {0, 70000, 16777215}, 3, -5);
  back = read_chunk_file(path(), {TypeId::int8}, 3, "old column");
  EXPECT_EQ(std::vector<int64_t>(back.values<int64_t>(), back.values<int64_t>() + 3),
            (std::vector<int64_t>{-5, 69995, 16777210}));
}

void expect_corrupted(const std::string& file, SqlType type, uint64_t rows, const std::string& why) {
  try {
    read_chunk_file(file, type, rows, "chunk 1 of table \"t\"");
    ADD_FAILURE() << "corruption not detected: " << why;
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::data_corrupted);
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
  }
}

void patch(const std::string& file, size_t offset, const void* bytes, size_t size) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(size));
}

TEST_F(ChunkFileTest, CorruptionIsDetected) {
  const SqlType type{TypeId::int4};
  const ColumnVector col = column(type, {1000, 1200, 1001, 1100}, {false, false, true, false});
  const std::string file = path();
  auto fresh = [&] {
    write_chunk_file(file, col);
    ASSERT_EQ(stored_width_of(file, col), 1u);
  };
  const size_t data_at = header_bytes + frame_header_bytes;

  fresh();
  const uint8_t flipped = 0x55;
  patch(file, data_at + 1, &flipped, 1);  // a stored value
  expect_corrupted(file, type, 4, "checksum mismatch");

  fresh();
  const int64_t other_reference = 999;  // a valid frame, but not the one the checksum covers
  patch(file, header_bytes + 8, &other_reference, sizeof other_reference);
  expect_corrupted(file, type, 4, "checksum mismatch");

  fresh();
  const int64_t out_of_range = int64_t{1} << 40;  // no int4 value
  patch(file, header_bytes + 8, &out_of_range, sizeof out_of_range);
  expect_corrupted(file, type, 4, "invalid stored width");

  fresh();
  const uint32_t width = 5;
  patch(file, header_bytes, &width, sizeof width);
  expect_corrupted(file, type, 4, "invalid stored width");

  fresh();
  const uint32_t native = 4;  // the native width with a non-zero reference
  patch(file, header_bytes, &native, sizeof native);
  expect_corrupted(file, type, 4, "invalid stored width");

  fresh();
  const uint32_t bits_of_two_bytes = 9;  // more bits than the 1-byte width holds
  patch(file, header_bytes + 16, &bits_of_two_bytes, sizeof bits_of_two_bytes);
  expect_corrupted(file, type, 4, "invalid stored width");

  fresh();
  const uint32_t no_bits = 0;  // a 1-byte width in no bits
  patch(file, header_bytes + 16, &no_bits, sizeof no_bits);
  expect_corrupted(file, type, 4, "invalid stored width");

  fresh();
  const uint32_t reserved = 1;
  patch(file, header_bytes + 20, &reserved, sizeof reserved);
  expect_corrupted(file, type, 4, "invalid stored width");

  fresh();
  const uint32_t exponent = 4;  // an integer column has no decimal exponent
  patch(file, header_bytes + 4, &exponent, sizeof exponent);
  expect_corrupted(file, type, 4, "invalid stored width");

  const ColumnVector f8 = doubles({1.25, 2.5});
  write_chunk_file(file, f8);
  const uint32_t too_large = 11;
  patch(file, header_bytes + 4, &too_large, sizeof too_large);
  expect_corrupted(file, f8.type, 2, "invalid stored width");

  fresh();
  const uint32_t version_two = 2;  // wide numerics only
  patch(file, 4, &version_two, sizeof version_two);
  expect_corrupted(file, type, 4, "unsupported format version 2");

  fresh();
  fs::resize_file(file, fs::file_size(file) - 1);
  expect_corrupted(file, type, 4, "truncated");

  fresh();
  std::ofstream(file, std::ios::app | std::ios::binary) << 'x';
  expect_corrupted(file, type, 4, "trailing bytes");

  fresh();
  expect_corrupted(file, type, 5, "does not match the catalog");
  expect_corrupted(file, {TypeId::int8}, 4, "does not match the catalog");

  fs::remove(file);
  expect_corrupted(file, type, 4, "missing");
}

}  // namespace
}  // namespace tally::storage
