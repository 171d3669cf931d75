#pragma once
// An open-addressing string -> dictionary code index used while appending:
// flat slots (full hash + code, strings compared through the dictionary) are
// several times faster to probe than StringDictionary's node-based map, which
// matters when COPY interns every text value of millions of rows.
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "storage/column_vector.hpp"

namespace tally::storage {

class CodeIndex {
 public:
  // A short inline multiply-xorshift hash: text keys are mostly a few bytes,
  // where a call into std::hash's MurmurHash costs more than the probe.
  static uint64_t hash(std::string_view v) {
    constexpr uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = v.size() * k;
    const char* p = v.data();
    size_t n = v.size();
    while (n >= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * k;
      h ^= h >> 29;
      p += 8;
      n -= 8;
    }
    if (n > 0) {
      uint64_t w = 0;
      std::memcpy(&w, p, n);
      h = (h ^ w) * k;
    }
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    return h;
  }

  bool empty() const { return slots_.empty(); }

  // Indexes every code of dict.
  void build(const StringDictionary& dict) {
    size_t cap = 64;
    while (cap < static_cast<size_t>(dict.size()) * 2 + 2) cap *= 2;
    slots_.assign(cap, Slot{0, -1});
    count_ = 0;
    for (int32_t code = 0; code < dict.size(); ++code) insert(hash(dict.at(code)), code);
  }

  // The code of v (hash h) in dict, or -1.
  int32_t find(std::string_view v, uint64_t h, const StringDictionary& dict) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.code < 0) return -1;
      if (s.hash == h && dict.at(s.code) == v) return s.code;
    }
  }

  void insert(uint64_t h, int32_t code) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    place(h, code);
  }

 private:
  struct Slot {
    uint64_t hash;
    int32_t code;  // -1 = empty
  };
  void place(uint64_t h, int32_t code) {
    const size_t mask = slots_.size() - 1;
    size_t i = h & mask;
    while (slots_[i].code >= 0) i = (i + 1) & mask;
    slots_[i] = Slot{h, code};
    ++count_;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{0, -1});
    count_ = 0;
    for (const Slot& s : old)
      if (s.code >= 0) place(s.hash, s.code);
  }

  std::vector<Slot> slots_;
  size_t count_ = 0;
};

}  // namespace tally::storage
