#include "storage/column_stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <future>
#include <thread>

#include "common/hll_hash.hpp"
#include "storage/numeric_slot.hpp"
#include "storage/value_range.hpp"

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
  // The sketch of both inputs: the larger register of each pair.
  void merge(const HllBuilder& other) {
    for (size_t j = 2; j < registers_.size(); ++j) registers_[j] = std::max(registers_[j], other.registers_[j]);
  }
  std::vector<uint8_t> take() { return std::move(registers_); }

 private:
  std::vector<uint8_t> registers_;
};

// The statistics of rows [begin, end) of a column; parts of one column merge.
struct Part {
  uint64_t null_count = 0;
  bool any_int = false, any_float = false;
  int64_t min_int = INT64_MAX, max_int = INT64_MIN;
  double min_float = INFINITY, max_float = -INFINITY;
  HllBuilder hll;

  void merge(const Part& o) {
    null_count += o.null_count;
    any_int = any_int || o.any_int;
    any_float = any_float || o.any_float;
    min_int = std::min(min_int, o.min_int);
    max_int = std::max(max_int, o.max_int);
    min_float = std::min(min_float, o.min_float);
    max_float = std::max(max_float, o.max_float);
    hll.merge(o.hll);
  }
};

// A sketch depends only on the set of values it saw, so a column of few
// distinct values in a narrow range (small counts, flags, codes of a short
// dictionary) is sketched from a byte map of the values present: a plain
// store a row and one hash per value, where hashing every row costs about
// ten times the store. Wider ranges gain nothing, since most of their values
// are distinct.
constexpr uint64_t present_map_rows_per_value = 4;

template <class T>
void integer_stats(const ColumnVector& col, size_t begin, size_t end, Part& st) {
  const T* v = col.values<T>();
  const bool nulls = col.has_nulls();
  const uint8_t* valid = nulls ? col.validity.data() : nullptr;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  size_t present = 0;
  if (!nulls) {
    if (end > begin) {
      const auto [l, h] = range_of(v + begin, end - begin);
      lo = static_cast<int64_t>(l);
      hi = static_cast<int64_t>(h);
    }
    present = end - begin;
  } else {
    for (size_t i = begin; i < end; ++i) {
      if (valid[i] == 0) continue;
      const auto x = static_cast<int64_t>(v[i]);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      ++present;
    }
  }
  if (present == 0) return;
  st.any_int = true;
  st.min_int = std::min(st.min_int, lo);
  st.max_int = std::max(st.max_int, hi);
  const auto range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;  // 0 when it spans all of int64
  if (range != 0 && range <= present / present_map_rows_per_value) {
    std::vector<uint8_t> seen(range, 0);
    for (size_t i = begin; i < end; ++i) {
      if (nulls && valid[i] == 0) continue;
      seen[static_cast<uint64_t>(static_cast<int64_t>(v[i])) - static_cast<uint64_t>(lo)] = 1;
    }
    for (uint64_t at = 0; at < range; ++at)
      if (seen[at] != 0) st.hll.add(static_cast<uint64_t>(lo) + at);
    return;
  }
  for (size_t i = begin; i < end; ++i) {
    if (nulls && valid[i] == 0) continue;
    st.hll.add(static_cast<uint64_t>(static_cast<int64_t>(v[i])));
  }
}

template <class T>
void float_stats(const ColumnVector& col, size_t begin, size_t end, Part& st) {
  const T* v = col.values<T>();
  for (size_t i = begin; i < end; ++i) {
    if (col.is_null(i)) continue;
    double x = static_cast<double>(v[i]);
    if (x == 0) x = 0;  // -0.0 and 0.0 are one value
    st.hll.add(std::bit_cast<uint64_t>(x));
    if (std::isnan(x)) continue;
    st.any_float = true;
    st.min_float = std::min(st.min_float, x);
    st.max_float = std::max(st.max_float, x);
  }
}

// numeric wider than int64 (numeric(19..38,s), unconstrained): no min/max
// (the catalog's min/max are int64), a sketch over the value itself: trailing
// zeros are stripped first so that 1.5 and 1.50 of an unconstrained column
// count as one value, as they compare equal in SQL.
void wide_numeric_stats(const ColumnVector& col, size_t begin, size_t end, Part& st) {
  const size_t width = static_cast<size_t>(storage_width(col.type));
  for (size_t i = begin; i < end; ++i) {
    if (col.is_null(i)) continue;
    StoredNumeric n = load_numeric(col.type, col.data.data() + i * width);
    if (n.mantissa == 0) n.scale = 0;
    while (n.scale > 0 && n.mantissa % 10 == 0) {
      n.mantissa /= 10;
      --n.scale;
    }
    const auto bits = static_cast<unsigned __int128>(n.mantissa);
    const auto low = static_cast<uint64_t>(bits), high = static_cast<uint64_t>(bits >> 64);
    st.hll.add(low ^ hll_hash(high + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(n.scale + 1)));
  }
}

// False for a type without statistics.
bool part_stats(const ColumnVector& col, size_t begin, size_t end, Part& st) {
  if (col.has_nulls())
    for (size_t i = begin; i < end; ++i) st.null_count += col.validity[i] == 0;
  switch (col.type.id) {
    case TypeId::boolean: integer_stats<uint8_t>(col, begin, end, st); break;
    case TypeId::int2: integer_stats<int16_t>(col, begin, end, st); break;
    case TypeId::int4:
    case TypeId::date:
    case TypeId::text:
    case TypeId::varchar:
    case TypeId::bpchar:
    case TypeId::bytea: integer_stats<int32_t>(col, begin, end, st); break;
    case TypeId::int8:
    case TypeId::time:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::numeric:
      if (storage_width(col.type) == 8) integer_stats<int64_t>(col, begin, end, st);
      else wide_numeric_stats(col, begin, end, st);
      break;
    case TypeId::float4: float_stats<float>(col, begin, end, st); break;
    case TypeId::float8: float_stats<double>(col, begin, end, st); break;
    default: return false;
  }
  return true;
}

// Fewest rows per part when a column is summarized on several threads: a
// hash per row makes a chunk's sketch take milliseconds per column, which
// the threads of a many-core host divide; a part of fewer rows costs about
// as much as the thread that runs it.
constexpr size_t part_rows = size_t{1} << 16;

}  // namespace

catalog::ColumnStats compute_column_stats(const ColumnVector& col, unsigned threads_wanted) {
  catalog::ColumnStats st;
  const size_t threads = std::max(1u, threads_wanted != 0 ? threads_wanted : std::thread::hardware_concurrency());
  const size_t parts = std::max<size_t>(1, std::min(col.rows / part_rows, threads));
  std::vector<Part> part(parts);
  const size_t per = (col.rows + parts - 1) / parts;
  auto run = [&](size_t k) { return part_stats(col, k * per, std::min(col.rows, (k + 1) * per), part[k]); };
  std::vector<std::future<bool>> others;
  for (size_t k = 1; k < parts; ++k) others.push_back(std::async(std::launch::async, run, k));
  const bool known = run(0);
  for (auto& f : others) f.get();
  for (size_t k = 1; k < parts; ++k) part[0].merge(part[k]);
  st.null_count = part[0].null_count;
  if (!known) return st;
  if (part[0].any_int) {
    st.has_min_max = true;
    st.min_int = part[0].min_int;
    st.max_int = part[0].max_int;
  } else if (part[0].any_float) {
    st.has_min_max = true;
    st.min_float = part[0].min_float;
    st.max_float = part[0].max_float;
  }
  st.hll = part[0].hll.take();
  return st;
}

}  // namespace tally::storage
