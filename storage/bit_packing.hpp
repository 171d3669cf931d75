#pragma once
// Bit-packed form of a chunk file's frame distances (chunk_file.hpp, version
// 4): each distance in the bits its largest one needs, low bits first, one
// little-endian bit stream. A key of 100 distinct codes takes 7 bits, not a
// byte; one of a million, 20 bits, not 3 bytes: a large result's write is
// bound by the disk, and its keys are most of what it writes.
#include <cstddef>
#include <cstdint>

namespace tally::storage {

// Bytes of `count` values of `bits` bits each.
inline size_t packed_bytes(size_t count, uint32_t bits) { return (count * bits + 7) / 8; }

// Bytes a reader must be able to read past a packed block: unpack_bits
// loads 8 bytes at a time.
constexpr size_t packed_slack_bytes = 8;

// Packs `count` values of `width` bytes each (1..4, little-endian, every one
// below 2^bits) from `words` into packed_bytes(count, bits) bytes at `out`;
// bits <= 8 * width.
void pack_bits(const uint8_t* words, uint32_t width, size_t count, uint32_t bits, uint8_t* out);

// The inverse: `count` values of `bits` bits from `in` (readable for
// packed_bytes(count, bits) + packed_slack_bytes bytes) into `words`, each
// in `width` bytes.
void unpack_bits(const uint8_t* in, uint32_t bits, size_t count, uint32_t width, uint8_t* words);

}  // namespace tally::storage
