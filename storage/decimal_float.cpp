#include "storage/decimal_float.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "storage/frame_width.hpp"

namespace tally::storage {
namespace {

constexpr double powers_of_ten[decimal_float_max_exponent + 1] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5,
                                                                  1e6, 1e7, 1e8, 1e9, 1e10};
// Below 2^51 every integer is a double, so n converts to double exactly and
// the decoded value is one correctly rounded division; and adding then
// subtracting 1.5 * 2^52 rounds to an integer (the build's baseline x86-64
// has no rounding instruction: std::nearbyint is a library call).
constexpr double exact_integer_limit = 2251799813685248.0;
constexpr double rounding_constant = 6755399441055744.0;

int64_t rounded(double scaled) { return static_cast<int64_t>((scaled + rounding_constant) - rounding_constant); }

// x as n / 10^e, if decoding n gives back x's exact bits.
std::optional<int64_t> decimal_of(double x, double scale) {
  const double scaled = x * scale;
  if (!(std::fabs(scaled) < exact_integer_limit)) return std::nullopt;  // also NaN and infinities
  const int64_t n = rounded(scaled);
  if (std::bit_cast<uint64_t>(static_cast<double>(n) / scale) != std::bit_cast<uint64_t>(x)) return std::nullopt;
  return n;
}

// Whether all n values have a decimal form under scale, widening [lo, hi]
// by their integers when they do (unchanged otherwise). No branch per row:
// the check of a block costs about a multiply and a division a value.
constexpr size_t check_block_rows = 1024;

bool block_decimal(const double* v, size_t n, double scale, int64_t& lo, int64_t& hi) {
  bool all = true;
  int64_t block_lo = lo, block_hi = hi;
  for (size_t i = 0; i < n; ++i) {
    const double scaled = v[i] * scale;
    const bool in_range = std::fabs(scaled) < exact_integer_limit;
    const double r = in_range ? (scaled + rounding_constant) - rounding_constant : 0.0;
    const auto k = static_cast<int64_t>(r);
    all &= in_range & (std::bit_cast<uint64_t>(static_cast<double>(k) / scale) == std::bit_cast<uint64_t>(v[i]));
    block_lo = std::min(block_lo, k);
    block_hi = std::max(block_hi, k);
  }
  if (!all) return false;
  lo = block_lo;
  hi = block_hi;
  return true;
}

// Rows the exponent is chosen on: the smallest exponent under which these
// all have a decimal form is then checked against every row.
constexpr size_t sample_rows = 256;

}  // namespace

std::optional<DecimalFrame> choose_decimal_frame(const ColumnVector& column) {
  const double* v = column.values<double>();
  const bool nulls = column.has_nulls();
  auto valid = [&](size_t i) { return !nulls || column.validity[i] != 0; };
  std::optional<uint32_t> exponent;
  for (uint32_t e = 0; e <= decimal_float_max_exponent && !exponent; ++e) {
    bool all = true;
    for (size_t i = 0, seen = 0; i < column.rows && seen < sample_rows && all; ++i) {
      if (!valid(i)) continue;
      ++seen;
      all = decimal_of(v[i], powers_of_ten[e]).has_value();
    }
    if (all) exponent = e;
  }
  if (!exponent) return std::nullopt;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  // Every row under the exponent; a row that needs a larger one restarts the
  // pass with it (at most decimal_float_max_exponent passes).
  for (size_t i = 0; i < column.rows;) {
    if (!nulls) {
      const size_t end = std::min(column.rows, i + check_block_rows);
      if (block_decimal(v + i, end - i, powers_of_ten[*exponent], lo, hi)) {
        i = end;
        continue;
      }
    }
    for (const size_t end = std::min(column.rows, i + check_block_rows); i < end; ++i) {
      if (!valid(i)) continue;
      const auto n = decimal_of(v[i], powers_of_ten[*exponent]);
      if (!n) break;
      lo = std::min(lo, *n);
      hi = std::max(hi, *n);
    }
    if (i == column.rows || !valid(i) || decimal_of(v[i], powers_of_ten[*exponent])) continue;
    do {
      if (++*exponent > decimal_float_max_exponent) return std::nullopt;
    } while (!decimal_of(v[i], powers_of_ten[*exponent]));
    lo = INT64_MAX;
    hi = INT64_MIN;
    i = 0;
  }
  DecimalFrame decimal;
  decimal.exponent = *exponent;
  if (lo > hi) return decimal;  // all NULL (or no rows): width 0
  const uint64_t distance = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  decimal.frame.reference = lo;
  decimal.frame.width = narrowest_frame_width(distance);
  decimal.frame.bits = static_cast<uint32_t>(std::bit_width(distance));
  if (decimal.frame.width == 8) return std::nullopt;
  return decimal;
}

void encode_decimal(const ColumnVector& column, const DecimalFrame& decimal, size_t begin, size_t count,
                    uint8_t* out) {
  const double* v = column.values<double>() + begin;
  const double scale = powers_of_ten[decimal.exponent];
  const bool nulls = column.has_nulls();
  const auto base = static_cast<uint64_t>(decimal.frame.reference);
  for (size_t i = 0; i < count; ++i) {
    const bool null = nulls && column.validity[begin + i] == 0;
    // Exact: choose_decimal_frame checked this value's form.
    const uint64_t d = null ? 0 : static_cast<uint64_t>(rounded(v[i] * scale)) - base;
    switch (decimal.frame.width) {
      case 1: out[i] = static_cast<uint8_t>(d); break;
      case 2: {
        const auto w = static_cast<uint16_t>(d);
        std::memcpy(out + 2 * i, &w, 2);
        break;
      }
      case 3: {
        const Uint24 w(d);
        std::memcpy(out + 3 * i, &w, 3);
        break;
      }
      case 4: {
        const auto w = static_cast<uint32_t>(d);
        std::memcpy(out + 4 * i, &w, 4);
        break;
      }
      default: break;
    }
  }
}

bool valid_decimal_frame(const DecimalFrame& decimal) {
  const uint32_t w = decimal.frame.width;
  return decimal.exponent <= decimal_float_max_exponent && is_frame_width(w) &&
         std::fabs(static_cast<double>(decimal.frame.reference)) < exact_integer_limit;
}

namespace {

template <class S>
void decode_as(const uint8_t* in, int64_t reference, double scale, size_t count, double* dst) {
  const S* src = reinterpret_cast<const S*>(in);
  for (size_t i = 0; i < count; ++i) dst[i] = static_cast<double>(reference + static_cast<int64_t>(src[i])) / scale;
}

}  // namespace

void decode_decimal(const uint8_t* in, const DecimalFrame& decimal, size_t begin, size_t count, ColumnVector& column) {
  double* dst = column.mutable_values<double>() + begin;
  const double scale = powers_of_ten[decimal.exponent];
  const int64_t reference = decimal.frame.reference;
  switch (decimal.frame.width) {
    case 0: std::fill(dst, dst + count, static_cast<double>(reference) / scale); break;
    case 1: decode_as<uint8_t>(in, reference, scale, count, dst); break;
    case 2: decode_as<uint16_t>(in, reference, scale, count, dst); break;
    case 3:
      for_each_uint24(in, count, [&](size_t i, uint32_t d) { dst[i] = static_cast<double>(reference + d) / scale; });
      break;
    case 4: decode_as<uint32_t>(in, reference, scale, count, dst); break;
    default: break;
  }
}

}  // namespace tally::storage
