#pragma once
// The set of one unique key's values, each given as the bytes that are equal
// exactly when PostgreSQL's equality says the values are (unique_keys.cpp).
// A key's bytes have one length for every row. Keys of up to 16 bytes (every
// integer, date and text-code key of up to four columns, TPC-H's composite
// keys among them) live in a flat open-addressing table of two-word slots,
// with no allocation per value; longer keys fall back to a set of strings.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "common/murmur_mix.hpp"

namespace tally::executor::dml {

class KeyValueSet {
 public:
  // `expected`: about how many values will be inserted, to size the table.
  explicit KeyValueSet(size_t expected = 0) : expected_(expected) {}

  // Adds the value; false when it was there already.
  bool insert(std::string_view bytes) {
    if (words_ == 0) start(bytes.size());
    if (words_ > kMaxWords) return strings_.insert(std::string(bytes)).second;
    Slot key{};
    std::memcpy(key.word, bytes.data(), bytes.size());
    if (key.is_empty_marker()) {
      // The marker of an empty slot is itself a value: kept aside.
      const bool added = !holds_marker_;
      holds_marker_ = true;
      return added;
    }
    for (size_t s = hash(key) & mask_;; s = (s + 1) & mask_) {
      Slot& slot = slots_[s];
      if (slot.is_empty_marker()) {
        slot = key;
        if (++used_ * 2 > slots_.size()) grow();
        return true;
      }
      if (slot.word[0] == key.word[0] && slot.word[1] == key.word[1]) return false;
    }
  }

 private:
  static constexpr size_t kMaxWords = 2;
  struct Slot {
    uint64_t word[kMaxWords];
    bool is_empty_marker() const { return word[0] == ~uint64_t{0} && word[1] == ~uint64_t{0}; }
  };
  static Slot empty_marker() { return Slot{{~uint64_t{0}, ~uint64_t{0}}}; }

  void start(size_t width) {
    words_ = (width + 7) / 8;
    if (words_ == 0) words_ = 1;
    if (words_ > kMaxWords) {
      strings_.reserve(expected_);
      return;
    }
    size_t capacity = 1024;
    while (capacity < expected_ * 2) capacity *= 2;
    slots_.assign(capacity, empty_marker());
    mask_ = capacity - 1;
  }
  static uint64_t hash(const Slot& key) { return murmur_fmix64(key.word[0] ^ murmur_fmix64(key.word[1] + 1)); }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2, empty_marker());
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& key : old) {
      if (key.is_empty_marker()) continue;
      size_t s = hash(key) & mask_;
      while (!slots_[s].is_empty_marker()) s = (s + 1) & mask_;
      slots_[s] = key;
    }
  }

  size_t expected_;
  size_t words_ = 0;  // 0 until the first value says how long the key is
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t used_ = 0;
  bool holds_marker_ = false;
  std::unordered_set<std::string> strings_;
};

}  // namespace tally::executor::dml
