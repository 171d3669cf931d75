#pragma once
// Bytes per value of a stored column, by the column's full type (common/
// sql_type.hpp's storage_width(TypeId) knows only the TypeId). numeric has
// three stored forms (storage/numeric_slot.hpp reads and writes them):
//   numeric(p,s), p <= 18        int64 scaled by 10^s            8 bytes
//   numeric(p,s), 19 <= p <= 38  int128 scaled by 10^s          16 bytes
//   numeric (no typmod)          int128 mantissa, int32 display
//                                scale, 4 zero bytes             24 bytes
// Values need at most 38 significant digits (what an int128 holds); wider
// ones are refused with 0A000.
#include "common/sql_type.hpp"

namespace tally {

constexpr int numeric_int64_max_precision = 18;
constexpr int numeric_max_stored_precision = 38;

inline int storage_width(SqlType type) {
  if (type.id != TypeId::numeric) return storage_width(type.id);
  if (type.typmod < 4) return 24;
  return type.numeric_precision() <= numeric_int64_max_precision ? 8 : 16;
}

}  // namespace tally
