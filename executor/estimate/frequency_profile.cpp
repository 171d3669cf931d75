#include "executor/estimate/frequency_profile.hpp"

#include <bit>

namespace tally::executor::estimate {

FrequencyProfile profile_from_hashes(std::span<const uint64_t> hashes) {
  FrequencyProfile profile;
  profile.sample_rows = hashes.size();
  if (hashes.empty()) return profile;
  // Load factor <= 0.5 keeps linear probing short. Slot value 0 marks empty,
  // so hash 0 is counted separately.
  const size_t capacity = std::bit_ceil(hashes.size() * 2);
  const size_t mask = capacity - 1;
  std::vector<uint64_t> keys(capacity, 0);
  std::vector<uint32_t> counts(capacity, 0);
  uint64_t zero_count = 0;
  for (uint64_t h : hashes) {
    if (h == 0) {
      ++zero_count;
      continue;
    }
    // The top bits pick the slot: the low bits of some key hashes (e.g. raw
    // integers) are less uniform than the high ones.
    size_t slot = static_cast<size_t>((h * 0x9E3779B97F4A7C15ull) >> 1) & mask;
    while (keys[slot] != 0 && keys[slot] != h) slot = (slot + 1) & mask;
    keys[slot] = h;
    ++counts[slot];
  }
  auto add = [&profile](uint64_t count) {
    if (profile.f.size() <= count) profile.f.resize(count + 1, 0);
    ++profile.f[count];
    ++profile.distinct;
  };
  for (size_t i = 0; i < capacity; ++i) {
    if (counts[i] != 0) add(counts[i]);
  }
  if (zero_count != 0) add(zero_count);
  return profile;
}

}  // namespace tally::executor::estimate
