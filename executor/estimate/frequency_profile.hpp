#pragma once
// FrequencyProfile: the "frequency of frequencies" of a sample of key hashes,
// f[i] = number of distinct keys seen exactly i times. Every sampling
// estimator of the number of distinct values is a function of it.
#include <cstdint>
#include <span>
#include <vector>

namespace tally::executor::estimate {

struct FrequencyProfile {
  uint64_t sample_rows = 0;     // n
  uint64_t distinct = 0;        // d = sum_i f[i]
  std::vector<uint64_t> f;      // f[0] is unused (0); f.size() = max frequency + 1

  uint64_t singletons() const { return f.size() > 1 ? f[1] : 0; }
  uint64_t doubletons() const { return f.size() > 2 ? f[2] : 0; }
};

// Counts the hashes with an open-addressing table (linear time, no sort).
// Hashes must be well mixed 64-bit values (e.g. hll_hash of the key bits, or
// the executor's combined multi-column key hash).
FrequencyProfile profile_from_hashes(std::span<const uint64_t> hashes);

}  // namespace tally::executor::estimate
