#include "executor/estimate/frequency_profile.hpp"

#include <bit>

namespace tally::executor::estimate {

namespace {
// The slot comes from the top bits of a multiplicative remix: the low bits
// of some key hashes (e.g. raw integers) are less uniform than the high ones.
inline size_t slot_of(uint64_t hash, size_t mask) { return static_cast<size_t>((hash * 0x9E3779B97F4A7C15ull) >> 20) & mask; }
constexpr size_t kInitialSlots = 1024;
}  // namespace

void FrequencyCounter::add(uint64_t hash, bool run_start) {
  ++rows_;
  if (run_start) ++run_starts_;
  if (hash == 0) {
    ++zero_count_;
    if (run_start) ++zero_start_count_;
    return;
  }
  if ((used_ + 1) * 2 > slots_.size()) grow();  // load factor <= 0.5 keeps probes short
  const size_t mask = slots_.size() - 1;
  size_t s = slot_of(hash, mask);
  while (slots_[s].key != 0 && slots_[s].key != hash) s = (s + 1) & mask;
  Slot& slot = slots_[s];
  if (slot.key == 0) {
    slot.key = hash;
    ++used_;
  }
  ++slot.count;
  if (run_start) ++slot.start_count;
}

void FrequencyCounter::grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? kInitialSlots : old.size() * 2, Slot{});
  const size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.key == 0) continue;
    size_t s = slot_of(slot.key, mask);
    while (slots_[s].key != 0) s = (s + 1) & mask;
    slots_[s] = slot;
  }
}

FrequencyProfile FrequencyCounter::build(bool starts_only) const {
  FrequencyProfile profile;
  profile.sample_rows = starts_only ? run_starts_ : rows_;
  auto add = [&profile](uint64_t count) {
    if (count == 0) return;
    if (profile.f.size() <= count) profile.f.resize(count + 1, 0);
    ++profile.f[count];
    ++profile.distinct;
  };
  for (const Slot& slot : slots_) {
    if (slot.key != 0) add(starts_only ? slot.start_count : slot.count);
  }
  add(starts_only ? zero_start_count_ : zero_count_);
  return profile;
}

FrequencyProfile FrequencyCounter::profile() const { return build(false); }
FrequencyProfile FrequencyCounter::run_start_profile() const { return build(true); }

FrequencyProfile profile_from_hashes(std::span<const uint64_t> hashes) {
  FrequencyCounter counter;
  for (uint64_t h : hashes) counter.add(h);
  return counter.profile();
}

}  // namespace tally::executor::estimate
