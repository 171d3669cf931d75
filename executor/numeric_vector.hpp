#pragma once
// Whole-Vector helpers for numeric values. A numeric Vector holds one
// Numeric (mantissa and scale) per row, but the rows of a numeric(p,s)
// column, or of +, - and * over such columns, all share one scale: these
// helpers find that scale once and then work on the mantissas alone, instead
// of rescaling row by row. Rows whose scale differs take Numeric's own
// operators, so answers and errors are the same either way.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "executor/value.hpp"

namespace tally::executor {

// The scale of the first non-NULL row among `rows` (infinite values have
// none), or nullopt where every row is NULL or the first is infinite. A
// guess for the fast path: callers still check each row's scale against it.
std::optional<int32_t> first_numeric_scale(const Vector& v, size_t rows);

// Writes every non-NULL row of `v` rescaled to `scale` (rounded half away
// from zero, as Numeric::rescaled) as an int64 into out[0 .. v.count);
// NULL rows get 0. False where a value does not fit an int64. Fast when
// the values share a scale at or below `scale`.
bool numeric_as_int64(const Vector& v, int32_t scale, int64_t* out);

// 10^n for 0 <= n <= 38.
__int128 numeric_pow10(int n);

// The largest n with 10^n < 2^63: aligning by at most this many digits is a
// multiply by an int64 factor.
constexpr int kInt64PowerDigits = 18;

inline bool fits_int64(__int128 m) { return m == static_cast<int64_t>(m); }

// m * factor for a mantissa that fits an int64 and a factor of at most
// 10^18: one 64x64->128-bit multiply, below 2^124, so it cannot overflow.
inline __int128 wide_product(__int128 m, int64_t factor) {
  return static_cast<__int128>(static_cast<int64_t>(m)) * factor;
}

}  // namespace tally::executor
