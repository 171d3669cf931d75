#pragma once
// An open-addressing string -> dictionary code index used while appending:
// flat slots (full hash + code, strings compared through the dictionary) are
// several times faster to probe than StringDictionary's node-based map, which
// matters when COPY interns every text value of millions of rows.
#include <cstdint>
#include <string_view>
#include <vector>

#include "storage/column_vector.hpp"

namespace tally::storage {

class CodeIndex {
 public:
  static uint64_t hash(std::string_view v) { return std::hash<std::string_view>{}(v); }

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
