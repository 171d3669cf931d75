#include "storage/frame_encoding.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#include "storage/column_layout.hpp"
#include "storage/frame_width.hpp"
#include "storage/value_range.hpp"

namespace tally::storage {
namespace {

// Calls f with a null pointer of the column's native value type.
template <class F>
void with_native(SqlType type, F&& f) {
  switch (frame_native_width(type)) {
    case 1: f(static_cast<uint8_t*>(nullptr)); break;  // bool: 0 or 1
    case 2: f(static_cast<int16_t*>(nullptr)); break;
    case 4: f(static_cast<int32_t*>(nullptr)); break;
    case 8: f(static_cast<int64_t*>(nullptr)); break;
    default: break;
  }
}

template <class T>
Frame frame_of(const ColumnVector& col) {
  const T* v = col.values<T>();
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  if (!col.has_nulls()) {
    if (col.rows != 0) {
      const auto [l, h] = range_of(v, col.rows);
      lo = static_cast<int64_t>(l);
      hi = static_cast<int64_t>(h);
    }
  } else {
    const uint8_t* valid = col.validity.data();
    for (size_t i = 0; i < col.rows; ++i) {
      if (valid[i] == 0) continue;
      const auto x = static_cast<int64_t>(v[i]);
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  }
  if (lo > hi) return Frame{0, 0};  // no rows, or all NULL: nothing to store
  const uint64_t distance = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  const uint32_t width = narrowest_frame_width(distance);
  if (width >= sizeof(T)) return Frame{0, static_cast<uint32_t>(sizeof(T)), 0};
  return Frame{lo, width, static_cast<uint32_t>(std::bit_width(distance))};
}

// Distances are taken in T's unsigned type: the reference is a value of T
// and every distance fits the stored width, so arithmetic modulo 2^bits(T)
// gives the same stored bits as 64-bit arithmetic, in vectorizable form.
template <class T, class S>
void encode_as(const ColumnVector& col, int64_t reference, size_t begin, size_t count, uint8_t* out) {
  using U = std::make_unsigned_t<T>;
  const T* v = col.values<T>() + begin;
  const auto base = static_cast<U>(reference);
  S* dst = reinterpret_cast<S*>(out);
  if (!col.has_nulls()) {
    for (size_t i = 0; i < count; ++i) dst[i] = static_cast<S>(static_cast<U>(v[i]) - base);
    return;
  }
  const uint8_t* valid = col.validity.data() + begin;
  for (size_t i = 0; i < count; ++i) dst[i] = valid[i] ? static_cast<S>(static_cast<U>(v[i]) - base) : S{0};
}

template <class T, class S>
void decode_as(const uint8_t* in, int64_t reference, size_t begin, size_t count, ColumnVector& col) {
  using U = std::make_unsigned_t<T>;
  T* dst = col.mutable_values<T>() + begin;
  const auto base = static_cast<U>(reference);
  if constexpr (std::is_same_v<S, Uint24>) {
    for_each_uint24(in, count, [&](size_t i, uint32_t d) { dst[i] = static_cast<T>(static_cast<U>(base + static_cast<U>(d))); });
  } else {
    const S* src = reinterpret_cast<const S*>(in);
    for (size_t i = 0; i < count; ++i) dst[i] = static_cast<T>(static_cast<U>(base + static_cast<U>(src[i])));
  }
}

}  // namespace

uint32_t frame_native_width(SqlType type) {
  switch (type.id) {
    case TypeId::boolean:
    case TypeId::int2:
    case TypeId::int4:
    case TypeId::date:
    case TypeId::text:
    case TypeId::varchar:
    case TypeId::bpchar:
    case TypeId::bytea:
    case TypeId::int8:
    case TypeId::time:
    case TypeId::timestamp:
    case TypeId::timestamptz: return static_cast<uint32_t>(storage_width(type.id));
    case TypeId::numeric: return storage_width(type) == 8 ? 8 : 0;
    default: return 0;
  }
}

Frame choose_frame(const ColumnVector& column) {
  Frame frame{0, frame_native_width(column.type)};
  with_native(column.type, [&](auto* tag) { frame = frame_of<std::remove_pointer_t<decltype(tag)>>(column); });
  return frame;
}

bool valid_frame(SqlType type, Frame frame) {
  const uint32_t native = frame_native_width(type);
  if (native == 0) return false;
  if (frame.width == native) return frame.reference == 0;
  if (!is_frame_width(frame.width) || frame.width >= native) return false;
  bool in_range = false;
  with_native(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    in_range = frame.reference >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
               frame.reference <= static_cast<int64_t>(std::numeric_limits<T>::max());
  });
  return in_range;
}

void encode_frame(const ColumnVector& column, Frame frame, size_t begin, size_t count, uint8_t* out) {
  with_native(column.type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    switch (frame.width) {
      case 1: encode_as<T, uint8_t>(column, frame.reference, begin, count, out); break;
      case 2: encode_as<T, uint16_t>(column, frame.reference, begin, count, out); break;
      case 3: encode_as<T, Uint24>(column, frame.reference, begin, count, out); break;
      case 4: encode_as<T, uint32_t>(column, frame.reference, begin, count, out); break;
      default: break;  // 0: nothing stored
    }
  });
}

void decode_frame(const uint8_t* in, Frame frame, size_t begin, size_t count, ColumnVector& column) {
  with_native(column.type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    switch (frame.width) {
      case 0: {
        T* dst = column.mutable_values<T>() + begin;
        std::fill(dst, dst + count, static_cast<T>(frame.reference));
        break;
      }
      case 1: decode_as<T, uint8_t>(in, frame.reference, begin, count, column); break;
      case 2: decode_as<T, uint16_t>(in, frame.reference, begin, count, column); break;
      case 3: decode_as<T, Uint24>(in, frame.reference, begin, count, column); break;
      case 4: decode_as<T, uint32_t>(in, frame.reference, begin, count, column); break;
      default: break;
    }
  });
}

void zero_null_values(ColumnVector& column) {
  if (!column.has_nulls()) return;
  const size_t width = static_cast<size_t>(storage_width(column.type));
  for (size_t i = 0; i < column.rows; ++i)
    if (column.validity[i] == 0) std::memset(column.data.data() + i * width, 0, width);
}

}  // namespace tally::storage
