#include "executor/numeric_vector.hpp"

namespace tally::executor {

__int128 numeric_pow10(int n) {
  static const auto table = [] {
    struct Table { __int128 v[39]; } t{};
    t.v[0] = 1;
    for (int i = 1; i < 39; ++i) t.v[i] = t.v[i - 1] * 10;
    return t;
  }();
  return table.v[n];
}

std::optional<int32_t> first_numeric_scale(const Vector& v, size_t rows) {
  for (size_t i = 0; i < rows && i < v.numerics.size(); ++i) {
    if (v.null_at(i)) continue;
    if (v.numerics[i].is_infinite()) return std::nullopt;
    return v.numerics[i].scale;
  }
  return std::nullopt;
}

bool numeric_as_int64(const Vector& v, int32_t scale, int64_t* out) {
  const size_t rows = v.count;
  const Numeric* values = v.numerics.data();
  const std::optional<int32_t> shared = first_numeric_scale(v, rows);
  // Scaling up by at most 18 digits: one multiply by a 64-bit power, with
  // the int64 range checked on the result; rows of another scale round.
  const bool fast = shared && *shared <= scale && scale - *shared <= kInt64PowerDigits;
  const int32_t from = fast ? *shared : scale;
  const int64_t factor = fast ? static_cast<int64_t>(numeric_pow10(scale - from)) : 1;
  const bool nulls = !v.nulls.empty();
  for (size_t r = 0; r < rows; ++r) {
    if (nulls && v.nulls[r] != 0) {
      out[r] = 0;
      continue;
    }
    const Numeric& n = values[r];
    __int128 m;
    if (n.scale == from && fits_int64(n.mantissa)) {
      m = wide_product(n.mantissa, factor);
    } else {
      m = n.rescaled(scale).mantissa;
    }
    if (m > INT64_MAX || m < INT64_MIN) return false;
    out[r] = static_cast<int64_t>(m);
  }
  return true;
}

}  // namespace tally::executor
