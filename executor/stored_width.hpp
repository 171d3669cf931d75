#pragma once
// The width an engine, or a typed loop over stored values, takes a stored
// column of a type at: how it is laid out in a chunk file (int2 and bool are
// narrower and widened to int32 first; text is its int32 dictionary codes;
// numeric of at most 18 digits its scaled int64).
#include "common/column_width.hpp"
#include "common/sql_type.hpp"

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

}  // namespace tally::executor
