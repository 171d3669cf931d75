#include "storage/bit_packing.hpp"

#include <cstring>

namespace tally::storage {
namespace {

// A little-endian value of W bytes (W a constant: the copies compile to
// single loads and stores).
template <uint32_t W>
uint32_t load_word(const uint8_t* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, W);
  return v;
}

template <uint32_t W>
void store_word(uint8_t* p, uint32_t v) {
  std::memcpy(p, &v, W);
}

template <uint32_t W>
void pack_words(const uint8_t* words, size_t count, uint32_t bits, uint8_t* out) {
  // Whole 32-bit words leave the accumulator as it passes 32 bits (it holds
  // under 32 before a value of at most 32 bits joins it). A 3-byte value is
  // one 4-byte load masked, but the last (which may end the buffer).
  uint64_t pending = 0;
  uint32_t filled = 0;
  for (size_t i = 0; i < count; ++i) {
    uint32_t v;
    if constexpr (W == 3) v = i + 1 < count ? load_word<4>(words + i * W) & 0xFFFFFFu : load_word<3>(words + i * W);
    else v = load_word<W>(words + i * W);
    pending |= static_cast<uint64_t>(v) << filled;
    filled += bits;
    if (filled >= 32) {
      const auto low = static_cast<uint32_t>(pending);
      std::memcpy(out, &low, 4);
      out += 4;
      pending >>= 32;
      filled -= 32;
    }
  }
  for (; filled > 0; filled = filled > 8 ? filled - 8 : 0) {
    *out++ = static_cast<uint8_t>(pending);
    pending >>= 8;
  }
}

template <uint32_t W>
void unpack_words(const uint8_t* in, uint32_t bits, size_t count, uint8_t* words) {
  // Value i starts at bit i * bits: one unaligned 8-byte load from its
  // first byte holds it whole (at most 7 bits of offset + 32 bits).
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  size_t at = 0;
  for (size_t i = 0; i < count; ++i, at += bits) {
    uint64_t w;
    std::memcpy(&w, in + (at >> 3), sizeof w);
    store_word<W>(words + i * W, static_cast<uint32_t>((w >> (at & 7)) & mask));
  }
}

}  // namespace

void pack_bits(const uint8_t* words, uint32_t width, size_t count, uint32_t bits, uint8_t* out) {
  if (bits == 8 * width) {  // every bit used: the words are their own packing
    std::memcpy(out, words, count * width);
    return;
  }
  switch (width) {
    case 1: pack_words<1>(words, count, bits, out); break;
    case 2: pack_words<2>(words, count, bits, out); break;
    case 3: pack_words<3>(words, count, bits, out); break;
    case 4: pack_words<4>(words, count, bits, out); break;
    default: break;
  }
}

void unpack_bits(const uint8_t* in, uint32_t bits, size_t count, uint32_t width, uint8_t* words) {
  if (bits == 8 * width) {
    std::memcpy(words, in, count * width);
    return;
  }
  switch (width) {
    case 1: unpack_words<1>(in, bits, count, words); break;
    case 2: unpack_words<2>(in, bits, count, words); break;
    case 3: unpack_words<3>(in, bits, count, words); break;
    case 4: unpack_words<4>(in, bits, count, words); break;
    default: break;
  }
}

}  // namespace tally::storage
