#pragma once
// What the benchmarks that load tallyd with text COPY share: a fast integer
// formatter (snprintf per field would dominate loading 2^28 rows) and the
// deterministic key mixer their generated columns come from.
#include <cstdint>

namespace tally::bench {

// Writes v in decimal at p; returns the end.
inline char* put_int(char* p, int64_t v) {
  uint64_t u = static_cast<uint64_t>(v);
  if (v < 0) {
    *p++ = '-';
    u = ~u + 1;  // also right for INT64_MIN
  }
  char tmp[24];
  int n = 0;
  do { tmp[n++] = static_cast<char>('0' + u % 10); u /= 10; } while (u);
  while (n) *p++ = tmp[--n];
  return p;
}

// splitmix64's finalizer: row number -> well-spread 64 bits.
inline uint64_t mix(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return x;
}

// Row i's key, uniform in [0, 2^log2_groups).
inline uint32_t uniform_key(uint64_t i, int log2_groups) {
  return log2_groups == 0 ? 0 : static_cast<uint32_t>(mix(i) & ((uint64_t{1} << log2_groups) - 1));
}

}  // namespace tally::bench
