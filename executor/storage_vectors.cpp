#include "executor/storage_vectors.hpp"

#include <algorithm>
#include <cstring>

#include "executor/cancel_point.hpp"
#include "storage/numeric_slot.hpp"

namespace tally::executor {

namespace {

// Appends `n` rows of a stored numeric column to `out`, row i the stored
// row at(i): an int64 slot (numeric(p <= 18, s)) is read without asking the
// type per row, and nothing is zeroed first (a Numeric is 32 bytes).
// The statement's cancel token is looked at every kCancelStride rows: a
// chunk's million numerics are 32 MB of fresh pages, about 100 ms on a VM.
template <class At>
void append_stored_numerics(std::vector<Numeric>& out, const storage::ColumnVector& column, size_t n, At at) {
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
        int64_t v;
        std::memcpy(&v, data + at(i) * sizeof v, sizeof v);
        out.push_back(Numeric{v, scale});
      }
      continue;
    }
    for (size_t i = b; i < e; ++i) {
      const storage::StoredNumeric v = storage::load_numeric(column.type, data + at(i) * width);
      out.push_back(Numeric{v.mantissa, v.scale});
    }
  }
}

// Appends `n` rows of a stored column to `out`: row i is stored row at(i).
template <class At>
void append_rows(Vector& out, const storage::ColumnVector& column, SqlType type, size_t n, At at) {
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
    case TypeId::boolean: { auto* v = column.values<uint8_t>(); for (size_t i = 0; i < n; ++i) ints[i] = v[at(i)] != 0; break; }
    case TypeId::int2: { auto* v = column.values<int16_t>(); for (size_t i = 0; i < n; ++i) ints[i] = v[at(i)]; break; }
    case TypeId::int4:
    case TypeId::date: { auto* v = column.values<int32_t>(); for (size_t i = 0; i < n; ++i) ints[i] = v[at(i)]; break; }
    case TypeId::int8:
    case TypeId::timestamp:
    case TypeId::timestamptz:
    case TypeId::time:
    case TypeId::timetz: { auto* v = column.values<int64_t>(); for (size_t i = 0; i < n; ++i) ints[i] = v[at(i)]; break; }
    case TypeId::float4: { auto* v = column.values<float>(); for (size_t i = 0; i < n; ++i) floats[i] = v[at(i)]; break; }
    case TypeId::float8: { auto* v = column.values<double>(); for (size_t i = 0; i < n; ++i) floats[i] = v[at(i)]; break; }
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
        for (size_t i = 0; i < n; ++i) to[i] = out.null_at(base + i) ? 0 : codes[at(i)];
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
  append_rows(out, column, type, column.rows, [](size_t i) { return i; });
}

Vector vector_from_storage(const storage::ColumnVector& column, SqlType type) {
  Vector out(type);
  append_from_storage(out, column, type);
  return out;
}

Vector vector_from_stored_rows(const storage::ColumnVector& column, const std::vector<uint32_t>& rows, SqlType type) {
  Vector out(type);
  const uint32_t* at = rows.data();
  append_rows(out, column, type, rows.size(), [at](size_t i) { return static_cast<size_t>(at[i]); });
  return out;
}

}  // namespace tally::executor
