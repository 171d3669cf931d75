#pragma once
// The widths a chunk file stores a frame-of-reference value in (0, 1, 2, 3
// or 4 bytes; frame_encoding.hpp, decimal_float.hpp). Three bytes hold the
// keys of a million groups (an H2O id3 or id6, a million distinct codes) and
// four-digit floats under 1,677.7216, a quarter less than four bytes: a
// large result's write is bound by the disk's bandwidth.
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tally::storage {

// A little-endian 24-bit unsigned value, unaligned: one stored value of width 3.
struct Uint24 {
  uint8_t bytes[3];
  Uint24() = default;
  explicit Uint24(uint64_t v)
      : bytes{static_cast<uint8_t>(v), static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v >> 16)} {}
  operator uint32_t() const {
    return static_cast<uint32_t>(bytes[0]) | static_cast<uint32_t>(bytes[1]) << 8 |
           static_cast<uint32_t>(bytes[2]) << 16;
  }
};
static_assert(sizeof(Uint24) == 3);

// Calls f(i, value) for the `count` stored 3-byte values at `in`: each read
// as one unaligned 4-byte load and a mask where a fourth byte follows (the
// last one byte by byte), about twice as fast as three byte loads.
template <class F>
void for_each_uint24(const uint8_t* in, size_t count, F&& f) {
  size_t i = 0;
  for (; i + 1 < count; ++i) {
    uint32_t w;
    std::memcpy(&w, in + 3 * i, sizeof w);
    f(i, w & 0xFFFFFFu);
  }
  if (i < count) f(i, static_cast<uint32_t>(reinterpret_cast<const Uint24*>(in)[i]));
}

// The narrowest stored width that holds distances up to `largest` (8: none).
inline uint32_t narrowest_frame_width(uint64_t largest) {
  if (largest == 0) return 0;
  if (largest <= UINT8_MAX) return 1;
  if (largest <= UINT16_MAX) return 2;
  if (largest <= 0xFFFFFF) return 3;
  if (largest <= UINT32_MAX) return 4;
  return 8;
}

// Whether `width` is one a frame may store values in.
inline bool is_frame_width(uint32_t width) { return width <= 4; }

}  // namespace tally::storage
