#pragma once
// Open-addressing hash table from int64 group keys to dense group ids
// (0, 1, 2, ... in insertion order), the CPU engine's hash variants' index.
// A slot holds the key beside its id, so a probe touches one cache line.
#include <cstdint>
#include <vector>

#include "common/memory_tracker.hpp"

namespace tally::executor::cpu {

// Grow at half full: linear probing stays short.
constexpr double kKeyTableMaxLoad = 0.5;

inline uint64_t hash_key(int64_t key) {
  uint64_t x = static_cast<uint64_t>(key);
  x ^= x >> 31;
  x *= 0x9E3779B97F4A7C15ULL;
  x ^= x >> 29;
  return x;
}

class KeyTable {
 public:
  KeyTable() : KeyTable(256) {}
  explicit KeyTable(size_t expected_groups) {
    size_t capacity = 512;
    while (static_cast<double>(capacity) * kKeyTableMaxLoad < static_cast<double>(expected_groups)) capacity *= 2;
    memory_.resize(bytes_for(capacity));
    slots_.assign(capacity, Slot{0, kEmpty});
    mask_ = capacity - 1;
    grow_at_ = static_cast<size_t>(static_cast<double>(capacity) * kKeyTableMaxLoad);
    keys_.reserve(expected_groups);
  }
  size_t groups() const { return keys_.size(); }
  const std::vector<int64_t>& keys() const { return keys_; }

  // Group id of key, adding it when new.
  uint32_t find_or_insert(int64_t key) {
    size_t s = hash_key(key) & mask_;
    while (true) {
      Slot& slot = slots_[s];
      if (slot.id == kEmpty) {
        const auto id = static_cast<uint32_t>(keys_.size());
        slot = Slot{key, id};
        keys_.push_back(key);
        if (++indexed_ > grow_at_) rehash(slots_.size() * 2);
        return id;
      }
      if (slot.key == key) return slot.id;
      s = (s + 1) & mask_;
    }
  }
  // Group id of key, or kNotFound; read-only, so threads may share it.
  static constexpr uint32_t kNotFound = UINT32_MAX;
  uint32_t find(int64_t key) const {
    for (size_t s = hash_key(key) & mask_;; s = (s + 1) & mask_) {
      const Slot& slot = slots_[s];
      if (slot.id == kEmpty || slot.key == key) return slot.id;
    }
  }
  // Brings the slot of key into cache ahead of find_or_insert.
  void prefetch(int64_t key) const { __builtin_prefetch(&slots_[hash_key(key) & mask_]); }
  // A group that is not found by key (the NULL-key group).
  uint32_t add_unindexed(int64_t key) {
    keys_.push_back(key);
    return static_cast<uint32_t>(keys_.size() - 1);
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    int64_t key;
    uint32_t id;
  };
  // Slots and the keys they index (at most half as many), held against the
  // statement's memory budget; a rehash holds the old slots beside the new.
  static uint64_t bytes_for(size_t capacity) {
    return capacity * (sizeof(Slot) + sizeof(int64_t) / 2);
  }
  void rehash(size_t capacity) {
    memory_.resize(bytes_for(capacity) + slots_.size() * sizeof(Slot));
    std::vector<Slot> old(capacity, Slot{0, kEmpty});
    old.swap(slots_);
    mask_ = capacity - 1;
    grow_at_ = static_cast<size_t>(static_cast<double>(capacity) * kKeyTableMaxLoad);
    for (const Slot& slot : old) {
      if (slot.id == kEmpty) continue;
      size_t s = hash_key(slot.key) & mask_;
      while (slots_[s].id != kEmpty) s = (s + 1) & mask_;
      slots_[s] = slot;
    }
    memory_.resize(bytes_for(capacity));
  }
  std::vector<Slot> slots_;
  std::vector<int64_t> keys_;
  size_t indexed_ = 0;
  size_t mask_ = 0;
  size_t grow_at_ = 0;
  MemoryReservation memory_;
};

}  // namespace tally::executor::cpu
