#pragma once
// The one random stream a differential generator draws from: seeded, so a
// seed printed with a failure reproduces the same data and the same queries.
#include <cstdint>
#include <iterator>
#include <random>
#include <string>

namespace tally::testing {

class FuzzRandom {
 public:
  explicit FuzzRandom(uint64_t seed) : rng_(seed) {}

  int pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool chance(int percent) { return pick(100) < percent; }
  template <typename T, size_t N>
  const T& one_of(const T (&items)[N]) {
    return items[pick(static_cast<int>(N))];
  }
  uint64_t next() { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

}  // namespace tally::testing
