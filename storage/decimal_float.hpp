#pragma once
// Decimal form of a float8 column in a chunk file: when every non-NULL value
// of the chunk is, bit for bit, n / 10^e for an integer n (|n| < 2^51) and
// one exponent e, the column is stored as those integers in the frame of
// reference form of storage/frame_encoding.hpp. Values that came from
// decimal text (H2O's v3 has four digits, prices, measurements), and most
// sums of a few of them, have such a form; a chunk that holds any other value
// (or NaN, an infinity, -0.0) is stored natively. The same idea as ALP
// (Afroozeh et al., SIGMOD 2024), without its exceptions.
#include <cstdint>
#include <optional>

#include "storage/column_vector.hpp"
#include "storage/frame_encoding.hpp"

namespace tally::storage {

// The largest decimal exponent tried: 10^10 keeps the integers of values up
// to about 2e5 below 2^51.
constexpr uint32_t decimal_float_max_exponent = 10;

struct DecimalFrame {
  uint32_t exponent = 0;  // values are integers / 10^exponent
  Frame frame;            // of the integers; width narrower than 8
};

// The decimal frame of a float8 column, or nullopt when some non-NULL value
// has no exact decimal form, or when the integers need 8 bytes.
std::optional<DecimalFrame> choose_decimal_frame(const ColumnVector& column);

// Writes rows [begin, begin + count) as the integers' distances from the
// reference, in frame.width bytes each; NULL rows as 0.
void encode_decimal(const ColumnVector& column, const DecimalFrame& decimal, size_t begin, size_t count,
                    uint8_t* out);

// Whether a decimal frame read from a file is one the writer could have chosen.
bool valid_decimal_frame(const DecimalFrame& decimal);

// Sets rows [begin, begin + count) of column.data (column.rows float8 values).
void decode_decimal(const uint8_t* in, const DecimalFrame& decimal, size_t begin, size_t count, ColumnVector& column);

}  // namespace tally::storage
