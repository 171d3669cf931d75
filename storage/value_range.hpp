#pragma once
// The smallest and largest of a run of native values, written for the
// baseline x86-64 target (SSE2) that the build compiles for: values narrower
// than 64 bits in GCC vector types, compared a register at a time (twice as
// fast as the auto-vectorized block loop, which reduces every block, and
// four times a scalar loop); int64 in blocks of a known count, which GCC's
// -O2 vectorizer handles (SSE2 has no 64-bit compare, so vector types would
// be emulated lane by lane). Used by the chunk writer's frame
// (storage/frame_encoding.cpp) and the statistics (storage/column_stats.cpp).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <utility>

namespace tally::storage {

// n > 0.
template <class T>
std::pair<T, T> range_of(const T* v, size_t n) {
  T lo = v[0], hi = v[0];
  size_t i = 0;
  if constexpr (sizeof(T) < 8) {
    constexpr size_t bytes = 32, lanes = bytes / sizeof(T);
    using Vector [[gnu::vector_size(bytes)]] = T;
    if (n >= 2 * lanes) {
      Vector vlo, vhi;
      std::memcpy(&vlo, v, bytes);
      vhi = vlo;
      for (i = lanes; i + lanes <= n; i += lanes) {
        Vector x;
        std::memcpy(&x, v + i, bytes);
        vlo = x < vlo ? x : vlo;
        vhi = x > vhi ? x : vhi;
      }
      for (size_t j = 0; j < lanes; ++j) {
        lo = std::min<T>(lo, vlo[j]);
        hi = std::max<T>(hi, vhi[j]);
      }
    }
  } else {
    constexpr size_t lanes = 16;
    for (; i + lanes <= n; i += lanes) {
      T block_lo = lo, block_hi = hi;
      for (size_t j = 0; j < lanes; ++j) {
        block_lo = v[i + j] < block_lo ? v[i + j] : block_lo;
        block_hi = v[i + j] > block_hi ? v[i + j] : block_hi;
      }
      lo = block_lo;
      hi = block_hi;
    }
  }
  for (; i < n; ++i) {
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
  return {lo, hi};
}

}  // namespace tally::storage
