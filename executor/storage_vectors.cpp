#include "executor/storage_vectors.hpp"

#include <algorithm>
#include <cstring>

#include "executor/cancel_point.hpp"
#include "storage/numeric_slot.hpp"

namespace tally::executor {

namespace {

// The rows a gather reads: every row of the column in order (the hardware
// streams them), or listed rows, whose values are fetched a few rows ahead
// of their use: a scan that keeps one row in twenty (a join's key test on
// lineitem) reads each kept value from its own cache line, and the gather
// otherwise waits on every one of those misses in turn.
struct AllRows {
  size_t operator()(size_t i) const { return i; }
  void prefetch(const void*, size_t, size_t) const {}
};

struct ListedRows {
  static constexpr size_t kAhead = 16;
  const uint32_t* rows;
  size_t n;
  size_t operator()(size_t i) const { return rows[i]; }
  void prefetch(const void* values, size_t width, size_t i) const {
    if (i + kAhead < n) __builtin_prefetch(static_cast<const uint8_t*>(values) + rows[i + kAhead] * width);
  }
};

// out[i] = convert(values[at(i)]) for i in [0, n).
template <class Out, class In, class At, class Convert>
void gather_values(Out* out, const In* values, size_t n, const At& at, Convert convert) {
  for (size_t i = 0; i < n; ++i) {
    at.prefetch(values, sizeof(In), i);
    out[i] = convert(values[at(i)]);
  }
}

// Appends `n` rows of a stored numeric column to `out`, row i the stored
// row at(i): an int64 slot (numeric(p <= 18, s)) is read without asking the
// type per row, and nothing is zeroed first (a Numeric is 32 bytes).
// The statement's cancel token is looked at every kCancelStride rows: a
// chunk's million numerics are 32 MB of fresh pages, about 100 ms on a VM.
template <class At>
void append_stored_numerics(std::vector<Numeric>& out, const storage::ColumnVector& column, size_t n, const At& at) {
  const size_t width = static_cast<size_t>(storage_width(column.type));
  out.reserve(out.size() + n);
  const uint8_t* data = column.data.data();
  const bool int64_slots = column.type.typmod >= 4 && width == sizeof(int64_t);
  const int32_t scale = int64_slots ? column.type.numeric_scale() : 0;
  for (size_t b = 0; b < n; b += kCancelStride) {
    if (b > 0) check_cancel_point();
    const size_t e = std::min<size_t>(n, b + kCancelStride);
    if (int64_slots) {
      for (size_t i = b; i < e; ++i) {
        at.prefetch(data, sizeof(int64_t), i);
        int64_t v;
        std::memcpy(&v, data + at(i) * sizeof v, sizeof v);
        out.push_back(Numeric{v, scale});
      }
      continue;
    }
    for (size_t i = b; i < e; ++i) {
      at.prefetch(data, width, i);
      const storage::StoredNumeric v = storage::load_numeric(column.type, data + at(i) * width);
      out.push_back(Numeric{v.mantissa, v.scale});
    }
  }
}

// Appends `n` rows of a stored column to `out`: row i is stored row at(i).
template <class At>
void append_rows(Vector& out, const storage::ColumnVector& column, SqlType type, size_t n, const At& at) {
  const size_t base = out.count;
  // Text stays dictionary codes (Vector::coded) while every row so far is
  // of this column's dictionary: filters, joins and group keys move int32
  // codes, and a string is made only where one is read.
  const bool codes_kept =
      column.dictionary && (base == 0 || (out.coded() && out.dictionary == column.dictionary));
  if (codes_kept && base == 0) {
    out.texts.clear();
    out.dictionary = column.dictionary;
  }
  // Numerics are decoded straight onto the end: resizing first would zero
  // 32 bytes a row only to overwrite them.
  const bool numerics_appended = type.id == TypeId::numeric && out.numerics.size() == base;
  if (numerics_appended) append_stored_numerics(out.numerics, column, n, at);
  out.resize(base + n);
  if (column.has_nulls()) {
    if (out.nulls.empty()) out.nulls.assign(base + n, 0);
    uint8_t* nulls = out.nulls.data() + base;
    for (size_t i = 0; i < n; ++i) nulls[i] = column.validity[at(i)] ? 0 : 1;
  }  // else: resize gave the new rows' NULL flags (if any are kept) 0
  const bool integer = physical_of(type.id) == Physical::integer || physical_of(type.id) == Physical::boolean;
  int64_t* ints = integer ? out.ints.data() + base : nullptr;
  double* floats = physical_of(type.id) == Physical::floating ? out.floats.data() + base : nullptr;
  switch (type.id) {
    case TypeId::boolean: gather_values(ints, column.values<uint8_t>(), n, at, [](uint8_t v) -> int64_t { return v != 0; }); break;
    case TypeId::int2: gather_values(ints, column.values<int16_t>(), n, at, [](int16_t v) -> int64_t { return v; }); break;
    case TypeId::int4:
    case TypeId::date: gather_values(ints, column.values<int32_t>(), n, at, [](int32_t v) -> int64_t { return v; }); break;
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::time:
    case TypeId::timetz: gather_values(ints, column.values<int64_t>(), n, at, [](int64_t v) { return v; }); break;
    case TypeId::float4: gather_values(floats, column.values<float>(), n, at, [](float v) -> double { return v; }); break;
    case TypeId::float8: gather_values(floats, column.values<double>(), n, at, [](double v) { return v; }); break;
    case TypeId::numeric: {
      if (numerics_appended) break;
      // int64, int128 or int128 + scale slots (storage/numeric_slot.hpp).
      const size_t width = static_cast<size_t>(storage_width(column.type));
      for (size_t i = 0; i < n; ++i) {
        const storage::StoredNumeric v = storage::load_numeric(column.type, column.data.data() + at(i) * width);
        out.numerics[base + i] = Numeric{v.mantissa, v.scale};
      }
      break;
    }
    default: {
      auto* codes = column.values<int32_t>();
      if (codes_kept) {
        int32_t* to = out.codes.data() + base;
        for (size_t i = 0; i < n; ++i) {
          at.prefetch(codes, sizeof *codes, i);
          to[i] = out.null_at(base + i) ? 0 : codes[at(i)];
        }
        break;
      }
      out.materialize();
      for (size_t i = 0; i < n; ++i) {
        if (out.null_at(base + i)) continue;
        out.texts[base + i] = std::string(column.dictionary->at(codes[at(i)]));
      }
    }
  }
}

}  // namespace

void append_from_storage(Vector& out, const storage::ColumnVector& column, SqlType type) {
  append_rows(out, column, type, column.rows, AllRows{});
}

Vector vector_from_storage(const storage::ColumnVector& column, SqlType type) {
  Vector out(type);
  append_from_storage(out, column, type);
  return out;
}

Vector vector_from_stored_rows(const storage::ColumnVector& column, const std::vector<uint32_t>& rows, SqlType type) {
  Vector out(type);
  append_rows(out, column, type, rows.size(), ListedRows{rows.data(), rows.size()});
  return out;
}

}  // namespace tally::executor
