#pragma once
// Frame-of-reference form of an integer-like column in a chunk file: each
// value is stored as its distance from the chunk column's smallest value,
// in the narrowest of 0, 1, 2, 3 or 4 bytes that holds the largest distance
// (0 bytes: every value equal), or natively when none is narrower than the
// type. Big results (a CREATE TABLE AS of 1e8 groups) are mostly keys and
// counts of small ranges: writing, syncing and reading them costs their
// stored bytes, which this form divides by up to 4 (8 for int8 counts).
// Integer-like: bool, int2, int4, int8, date, time, timestamp(tz),
// numeric(p <= 18) and the int32 dictionary codes of text kinds and bytea.
#include <cstdint>

#include "storage/column_vector.hpp"

namespace tally::storage {

// The native bytes per value of an integer-like type; 0 for any other type
// (floats, numerics wider than int64), which is always stored natively.
uint32_t frame_native_width(SqlType type);

struct Frame {
  int64_t reference = 0;  // the smallest non-NULL value (0 when stored natively or all NULL)
  uint32_t width = 0;     // bytes per distance: 0, 1, 2, 3, 4 or the native width
  // Bits of the largest distance (bit_packing.hpp: what a distance is stored
  // in); 0 when stored natively.
  uint32_t bits = 0;
};

// The frame of column (integer-like): the narrowest width that holds every
// non-NULL value's distance from the smallest.
Frame choose_frame(const ColumnVector& column);

// Writes rows [begin, begin + count) of column as distances of width
// frame.width (narrower than the native width) to out; NULL rows as 0.
void encode_frame(const ColumnVector& column, Frame frame, size_t begin, size_t count, uint8_t* out);

// Whether a frame read from a file is one the writer could have chosen for
// this type: a width of 0 to 4 narrower than the native one and a
// reference within the type's range.
bool valid_frame(SqlType type, Frame frame);

// Sets rows [begin, begin + count) of column.data (sized for column.rows
// native values) from stored values of width frame.width (a valid_frame).
void decode_frame(const uint8_t* in, Frame frame, size_t begin, size_t count, ColumnVector& column);

// Sets the values of column's NULL rows to 0, as the appender leaves them
// (a decoded NULL row holds the reference).
void zero_null_values(ColumnVector& column);

}  // namespace tally::storage
