#pragma once
// The benchmark's data generator: a pure function of (row, seed), usable on
// host and device, so the CPU reference regenerates rows instead of copying
// 2 GiB back. Keys: dense = uniform in [0, G); sparse = the same group index
// spread over the whole int4 range by an odd multiplier (a bijection mod 2^32,
// so exactly the same G distinct values, invertible for the check).
#include <cstdint>

#include "common/host_device.hpp"

namespace tally::bench {

constexpr uint32_t kSpreadMultiplier = 0x9E3779B1u;  // odd: invertible modulo 2^32

TALLY_HD uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// Group index of a row, uniform in [0, groups).
TALLY_HD uint32_t group_of(uint64_t row, uint64_t seed, uint64_t groups) {
  return static_cast<uint32_t>(((mix64(row ^ seed) >> 32) * groups) >> 32);
}

TALLY_HD int32_t key_of(uint32_t group, bool sparse) {
  return static_cast<int32_t>(sparse ? group * kSpreadMultiplier : group);
}

// Values: signed, 24 bits, never all zero.
TALLY_HD int32_t value_of(uint64_t row, uint64_t seed) {
  return static_cast<int32_t>(static_cast<uint32_t>(mix64(row * 0x9E3779B97F4A7C15ull + seed)) >> 8) - (1 << 23);
}

// Inverse of kSpreadMultiplier modulo 2^32 (Newton iteration).
constexpr uint32_t spread_inverse() {
  uint32_t x = kSpreadMultiplier;
  for (int i = 0; i < 5; ++i) x *= 2u - kSpreadMultiplier * x;
  return x;
}

}  // namespace tally::bench
