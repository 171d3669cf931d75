#include "storage/column_stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "common/hll_hash.hpp"
#include "storage/numeric_slot.hpp"

namespace tally::storage {
namespace {

// The serialized register format is executor/estimate/hll_sketch.hpp's
// (version byte, precision, 2^p uint8 registers); the hash is the one both share.
constexpr uint8_t hll_format_version = kHllFormatVersion;

class HllBuilder {
 public:
  HllBuilder() : registers_(2 + (size_t{1} << stats_hll_precision), 0) {
    registers_[0] = hll_format_version;
    registers_[1] = stats_hll_precision;
  }
  void add(uint64_t bits) {
    const uint64_t h = hll_hash(bits);
    const size_t j = h >> (64 - stats_hll_precision);
    const uint64_t rest = h << stats_hll_precision;
    const int max_rho = 64 - stats_hll_precision + 1;
    const int rho = rest == 0 ? max_rho : std::min(std::countl_zero(rest) + 1, max_rho);
    uint8_t& r = registers_[2 + j];
    if (rho > r) r = static_cast<uint8_t>(rho);
  }
  std::vector<uint8_t> take() { return std::move(registers_); }

 private:
  std::vector<uint8_t> registers_;
};

template <class T>
void integer_stats(const ColumnVector& col, catalog::ColumnStats& st, HllBuilder& hll) {
  const T* v = col.values<T>();
  int64_t mn = INT64_MAX, mx = INT64_MIN;
  for (size_t i = 0; i < col.rows; ++i) {
    if (col.is_null(i)) continue;
    const auto x = static_cast<int64_t>(v[i]);
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    hll.add(static_cast<uint64_t>(x));
  }
  if (st.null_count < col.rows) {
    st.has_min_max = true;
    st.min_int = mn;
    st.max_int = mx;
  }
}

template <class T>
void float_stats(const ColumnVector& col, catalog::ColumnStats& st, HllBuilder& hll) {
  const T* v = col.values<T>();
  double mn = INFINITY, mx = -INFINITY;
  bool any = false;
  for (size_t i = 0; i < col.rows; ++i) {
    if (col.is_null(i)) continue;
    double x = static_cast<double>(v[i]);
    if (x == 0) x = 0;  // -0.0 and 0.0 are one value
    hll.add(std::bit_cast<uint64_t>(x));
    if (std::isnan(x)) continue;
    any = true;
    mn = std::min(mn, x);
    mx = std::max(mx, x);
  }
  if (any) {
    st.has_min_max = true;
    st.min_float = mn;
    st.max_float = mx;
  }
}

// numeric wider than int64 (numeric(19..38,s), unconstrained): no min/max
// (the catalog's min/max are int64), a sketch over the value itself: trailing
// zeros are stripped first so that 1.5 and 1.50 of an unconstrained column
// count as one value, as they compare equal in SQL.
void wide_numeric_stats(const ColumnVector& col, catalog::ColumnStats& st, HllBuilder& hll) {
  const size_t width = static_cast<size_t>(storage_width(col.type));
  for (size_t i = 0; i < col.rows; ++i) {
    if (col.is_null(i)) continue;
    StoredNumeric n = load_numeric(col.type, col.data.data() + i * width);
    if (n.mantissa == 0) n.scale = 0;
    while (n.scale > 0 && n.mantissa % 10 == 0) {
      n.mantissa /= 10;
      --n.scale;
    }
    const auto bits = static_cast<unsigned __int128>(n.mantissa);
    const auto low = static_cast<uint64_t>(bits), high = static_cast<uint64_t>(bits >> 64);
    hll.add(low ^ hll_hash(high + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(n.scale + 1)));
  }
  (void)st;
}

}  // namespace

catalog::ColumnStats compute_column_stats(const ColumnVector& col) {
  catalog::ColumnStats st;
  if (col.has_nulls())
    for (size_t i = 0; i < col.rows; ++i) st.null_count += col.validity[i] == 0;
  HllBuilder hll;
  switch (col.type.id) {
    case TypeId::boolean: integer_stats<uint8_t>(col, st, hll); break;
    case TypeId::int2: integer_stats<int16_t>(col, st, hll); break;
    case TypeId::int4:
    case TypeId::date:
    case TypeId::text:
    case TypeId::varchar:
    case TypeId::bpchar: integer_stats<int32_t>(col, st, hll); break;
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::numeric:
      if (storage_width(col.type) == 8) integer_stats<int64_t>(col, st, hll);
      else wide_numeric_stats(col, st, hll);
      break;
    case TypeId::float4: float_stats<float>(col, st, hll); break;
    case TypeId::float8: float_stats<double>(col, st, hll); break;
    default: return st;
  }
  st.hll = hll.take();
  return st;
}

}  // namespace tally::storage
