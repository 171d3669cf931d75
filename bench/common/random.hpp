#pragma once
// splitmix64: small, fast, and good enough for the data generators' draws
// (tpch_datagen, hits_datagen); seeded streams make files that do not depend
// on how many threads wrote them.
#include <cstddef>
#include <cstdint>

namespace tally::bench {

// The splitmix64 finalizer: a well-mixed 64-bit value of x.
inline uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL) {}
  uint64_t next() { return mix64(state_ += 0x9E3779B97F4A7C15ULL); }
  // Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  // Uniform in [lo, hi].
  int64_t uniform(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool chance(double p) { return unit() < p; }
  template <typename T, size_t N>
  const T& pick(const T (&list)[N]) { return list[next() % N]; }

 private:
  uint64_t state_;
};

}  // namespace tally::bench
