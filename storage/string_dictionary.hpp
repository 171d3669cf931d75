#pragma once
// Code -> string for one text column, and string -> code for appends. Codes are
// dense, assigned in first-seen order and never change, so codes from
// different chunks compare equal.
//
// Every dictionary of a column is a prefix of the newest (appends only add),
// so the dictionaries of one column share one append-only store and differ
// only in how many of its entries they see: copying a dictionary is O(1), and
// an append interns into the shared store without copying what is there (a
// copy per append made each COPY into a column of millions of values cost time
// in proportion to the whole column, not to the rows it added).
//
// Threads: one writer per column at a time (the table's write lock); any number
// of readers of any dictionary of the column meanwhile, since the store never
// moves or changes an entry once written. intern() on a dictionary that is not
// the store's newest (an earlier append failed after interning) first forks a
// store of its own entries.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "common/text_match.hpp"

namespace tally::storage {

class StringDictionary {
 public:
  StringDictionary();
  StringDictionary(const StringDictionary& other) = default;
  StringDictionary& operator=(const StringDictionary& other) = default;

  // A dictionary holding source's entries under the same codes: an empty
  // column takes another column's entries this way, and values coded in
  // source are then its codes as they are (CREATE TABLE AS of a text GROUP
  // BY key). It shares source's store, in O(1), until it adds an entry of
  // its own: then it first copies its entries to a store of its own in one
  // pass (no string hashed or probed for), since the shared store is
  // another column's, written under that column's lock.
  static StringDictionary borrow(const StringDictionary& source);

  int32_t size() const { return size_; }
  // The append-only store this dictionary reads: dictionaries of one store
  // agree on every code below the smaller size (caches key on it, weakly).
  std::weak_ptr<const void> store_identity() const { return std::shared_ptr<const void>(store_); }
  std::string_view at(int32_t code) const { return store_->at(code); }

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

  // The code of value (hash h), or -1 when absent from this dictionary.
  int32_t find(std::string_view value, uint64_t h) const {
    const int32_t code = store_->find(value, h);
    return code < size_ ? code : -1;
  }
  int32_t find(std::string_view value) const { return find(value, hash(value)); }
  // The code of value in the newest dictionary of the store, or -1: safe from
  // other threads while this dictionary's owner interns (a value interned
  // meanwhile may be missed, never misreported). For an append's workers.
  int32_t find_newest(std::string_view value, uint64_t h) const {
    return borrowed_ ? find(value, h) : store_->find(value, h);
  }
  // One value of a batch lookup.
  struct Probe {
    std::string_view value;
    uint64_t hash = 0;
    int32_t code = -1;  // out: the value's code, -1 when absent
  };
  // find_newest for many values, with the same guarantees. Once the index
  // outgrows the cache every probe misses it up to three times in a row
  // (index slot, entry, bytes); probed one by one those waits add up to most
  // of a COPY's parse time, so the memory of later probes is loaded while
  // earlier ones compare.
  void find_newest(std::span<Probe> probes) const { store_->find_many(probes, borrowed_ ? size_ : INT32_MAX); }

  // A dictionary of `entries`, in code order, whose bytes are in `bytes`
  // (kept by the dictionary, not copied), its index sized for them at once:
  // a dictionary file's load. `tick` is called every 64K entries (a cancel
  // check). False, leaving `out` unset, where two entries are equal.
  static bool adopt(std::unique_ptr<char[]> bytes, const std::vector<std::string_view>& entries,
                    const std::function<void()>& tick, StringDictionary& out);

  // Returns the code of value, adding it if new.
  int32_t intern(std::string_view value, uint64_t h);
  int32_t intern(std::string_view value) { return intern(value, hash(value)); }

  // Makes this dictionary the newest of its store (forking one if not), so
  // that later interns never fork. Call before sharing it with find_newest.
  void make_newest();
  // Starts loading the index slot of hash h into the cache: a loop over
  // many values prefetches a few ahead, since each probe is a cache miss
  // once the index outgrows the cache.
  void prefetch(uint64_t h) const { store_->prefetch(h); }

 private:
  class Store;
  std::shared_ptr<Store> store_;
  int32_t size_ = 0;
  bool borrowed_ = false;  // store_ is another column's (borrow): copied before an add

  class Store {
   public:
    Store();
    ~Store();
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;
    int32_t size() const { return count_.load(std::memory_order_acquire); }
    std::string_view at(int32_t code) const {
      const auto [segment, offset] = locate(static_cast<uint64_t>(code));
      return segments_[segment][offset];
    }
    int32_t find(std::string_view value, uint64_t h) const { return find_in(index_.load(std::memory_order_acquire), value, h); }
    // find() of each probe, codes at or past limit counted absent; see find_newest(span).
    void find_many(std::span<Probe> probes, int32_t limit) const;
    // Adds value (absent) as the next code.
    int32_t add(std::string_view value, uint64_t h);
    // Fills this new, empty store with other's first n entries (same codes).
    void copy_prefix(const Store& other, int32_t n);
    // Fills this new, empty store with `entries` (see StringDictionary::adopt).
    bool adopt(std::unique_ptr<char[]> bytes, const std::vector<std::string_view>& entries,
               const std::function<void()>& tick);
    void prefetch(uint64_t h) const {
      const Index* index = index_.load(std::memory_order_acquire);
      __builtin_prefetch(&index->slots[h & index->mask]);
    }

   private:
    // Entries live in segments that double in size and never move.
    static constexpr uint64_t first_segment_entries = 1024;
    static constexpr int max_segments = 42;
    static std::pair<int, uint64_t> locate(uint64_t code) {
      const uint64_t x = code / first_segment_entries + 1;
      const int segment = 63 - __builtin_clzll(x);
      return {segment, code - first_segment_entries * ((uint64_t{1} << segment) - 1)};
    }
    struct Slot {
      std::atomic<uint64_t> hash{0};
      std::atomic<int32_t> code{-1};  // -1 = empty
    };
    // An open-addressing index (full hash + code; strings compared through
    // the entries). A grown index replaces the old one for new probes; old
    // ones stay until the store dies, since a reader may still be probing one.
    struct FreeSlots {
      void operator()(Slot* slots) const { ::operator delete[](slots); }  // trivially destructible
    };
    struct Index {
      // `tick` is called between pieces of the slots' initialization (an
      // index of millions of entries is hundreds of megabytes).
      explicit Index(size_t capacity, const std::function<void()>& tick = {});
      size_t mask;
      std::unique_ptr<Slot[], FreeSlots> slots;
    };
    void place(Index& index, uint64_t h, int32_t code);
    // Slots for n entries, as add() would have grown the index for them.
    static size_t index_capacity(size_t n);
    int32_t find_in(const Index* index, std::string_view value, uint64_t h) const;
    const char* copy_bytes(std::string_view value);

    std::string_view* segments_[max_segments] = {};
    std::atomic<int32_t> count_{0};
    std::atomic<Index*> index_{nullptr};
    std::vector<std::unique_ptr<Index>> indexes_;  // index_ and its predecessors
    std::vector<std::unique_ptr<char[]>> arenas_;   // the entries' bytes
    char* arena_next_ = nullptr;
    size_t arena_left_ = 0;
  };
};

// The entries of `dictionary` as the engines read them (text_match.hpp):
// its store is their identity.
std::shared_ptr<const TextEntries> dictionary_entries(std::shared_ptr<const StringDictionary> dictionary);

}  // namespace tally::storage
