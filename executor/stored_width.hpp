#pragma once
// The width an engine, or a typed loop over stored values, takes a stored
// column of a type at: how it is laid out in a chunk file (int2 and bool are
// narrower and widened to int32 first; text is its int32 dictionary codes;
// numeric of at most 18 digits its scaled int64).
#include <cstdint>
#include <vector>

#include "common/column_width.hpp"
#include "common/sql_type.hpp"
#include "storage/column_vector.hpp"

namespace tally::executor {

inline ColumnWidth stored_width(TypeId id) {
  switch (id) {
    case TypeId::float4: return ColumnWidth::float32;
    case TypeId::float8: return ColumnWidth::float64;
    case TypeId::int8: case TypeId::timestamp: case TypeId::timestamptz: case TypeId::time: case TypeId::timetz:
    case TypeId::numeric:
      return ColumnWidth::int64;
    default: return ColumnWidth::int32;
  }
}

// Whether a stored column must be widened to be read at stored_width.
inline bool stored_narrower(TypeId id) { return id == TypeId::int2 || id == TypeId::boolean; }

// An int2 or bool column's values widened to int32, as stored_width reads them.
inline std::vector<int32_t> widened_to_int32(const storage::ColumnVector& col) {
  std::vector<int32_t> out(col.rows);
  if (col.type.id == TypeId::int2) {
    for (size_t r = 0; r < col.rows; ++r) out[r] = col.values<int16_t>()[r];
  } else {
    for (size_t r = 0; r < col.rows; ++r) out[r] = col.values<uint8_t>()[r];
  }
  return out;
}

}  // namespace tally::executor
