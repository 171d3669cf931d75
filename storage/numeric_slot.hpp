#pragma once
// Reads and writes one stored numeric value in its column slot, whichever of
// the three stored forms the column's type uses (storage/column_layout.hpp):
// int64 scaled (numeric(p<=18,s)), int128 scaled (numeric(19..38,s)) or
// int128 mantissa + int32 display scale (unconstrained numeric). Slots are
// unaligned byte positions (rows * storage_width), hence memcpy.
#include <cstdint>
#include <cstring>

#include "storage/column_layout.hpp"

namespace tally::storage {

// A numeric as mantissa * 10^-scale; scale is PostgreSQL's display scale (>= 0).
struct StoredNumeric {
  __int128 mantissa = 0;
  int32_t scale = 0;
};

inline StoredNumeric load_numeric(SqlType type, const void* slot) {
  StoredNumeric n;
  if (type.typmod >= 4) {
    n.scale = type.numeric_scale();
    if (type.numeric_precision() <= numeric_int64_max_precision) {
      int64_t v;
      std::memcpy(&v, slot, sizeof v);
      n.mantissa = v;
    } else {
      std::memcpy(&n.mantissa, slot, sizeof n.mantissa);
    }
    return n;
  }
  std::memcpy(&n.mantissa, slot, sizeof n.mantissa);
  std::memcpy(&n.scale, static_cast<const uint8_t*>(slot) + 16, sizeof n.scale);
  return n;
}

// Stores mantissa (already at the column's scale when the type has a typmod,
// and within its precision: callers check and raise 22003 first).
inline void store_numeric(SqlType type, void* slot, __int128 mantissa, int32_t scale) {
  if (type.typmod >= 4) {
    if (type.numeric_precision() <= numeric_int64_max_precision) {
      const auto v = static_cast<int64_t>(mantissa);
      std::memcpy(slot, &v, sizeof v);
    } else {
      std::memcpy(slot, &mantissa, sizeof mantissa);
    }
    return;
  }
  auto* bytes = static_cast<uint8_t*>(slot);
  std::memcpy(bytes, &mantissa, sizeof mantissa);
  std::memcpy(bytes + 16, &scale, sizeof scale);
  std::memset(bytes + 20, 0, 4);  // padding: keeps files and checksums deterministic
}

}  // namespace tally::storage
