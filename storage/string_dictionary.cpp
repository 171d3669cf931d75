#include "storage/string_dictionary.hpp"

#include <new>
#include <stdexcept>

namespace tally::storage {
namespace {

// Bytes of one arena block; longer values get a block of their own.
constexpr size_t arena_block_bytes = size_t{1} << 20;
// The index grows past this load (probes stay short with full hashes).
constexpr size_t index_load_percent = 50;
constexpr size_t initial_index_slots = 64;

}  // namespace

StringDictionary::StringDictionary() : store_(std::make_shared<Store>()) {}

int32_t StringDictionary::intern(std::string_view value, uint64_t h) {
  const int32_t found = find(value, h);
  if (found >= 0) return found;
  make_newest();
  size_ = store_->add(value, h) + 1;
  return size_ - 1;
}

void StringDictionary::make_newest() {
  if (!borrowed_ && store_->size() == size_) return;
  // Entries past size_ belong to an append that did not commit, or the
  // store is another column's: copy ours.
  auto fork = std::make_shared<Store>();
  fork->copy_prefix(*store_, size_);
  store_ = std::move(fork);
  borrowed_ = false;
}

StringDictionary StringDictionary::borrow(const StringDictionary& source) {
  StringDictionary out(source);
  out.borrowed_ = true;
  return out;
}

void StringDictionary::Store::copy_prefix(const Store& other, int32_t n) {
  // The entries' bytes in one block, in code order.
  size_t bytes = 0;
  for (int32_t code = 0; code < n; ++code) bytes += other.at(code).size();
  char* next = nullptr;
  if (bytes > 0) {
    arenas_.push_back(std::make_unique_for_overwrite<char[]>(bytes));
    next = arenas_.back().get();
  }
  for (int32_t code = 0; code < n; ++code) {
    const auto [segment, offset] = locate(static_cast<uint64_t>(code));
    if (offset == 0) segments_[segment] = new std::string_view[first_segment_entries << segment];
    const std::string_view v = other.at(code);
    if (!v.empty()) std::memcpy(next, v.data(), v.size());
    segments_[segment][offset] = std::string_view(next, v.size());
    next += v.size();
  }
  // The index as add() would have grown it, filled from other's slots: the
  // full hashes are there, and codes below n are in other's current index
  // whatever its writer adds meanwhile (entries and slots never change).
  auto index = std::make_unique<Index>(index_capacity(static_cast<size_t>(n)));
  const Index* from = other.index_.load(std::memory_order_acquire);
  for (size_t i = 0; i <= from->mask; ++i) {
    const int32_t code = from->slots[i].code.load(std::memory_order_acquire);
    if (code >= 0 && code < n) place(*index, from->slots[i].hash.load(std::memory_order_relaxed), code);
  }
  indexes_.clear();
  indexes_.push_back(std::move(index));
  index_.store(indexes_.back().get(), std::memory_order_release);
  count_.store(n, std::memory_order_release);
}

StringDictionary::Store::Index::Index(size_t capacity, const std::function<void()>& tick)
    : mask(capacity - 1), slots(static_cast<Slot*>(::operator new[](capacity * sizeof(Slot)))) {
  constexpr size_t piece = size_t{1} << 20;
  for (size_t i = 0; i < capacity; ++i) {
    if ((i & (piece - 1)) == 0 && tick) tick();
    new (&slots[i]) Slot();
  }
}

size_t StringDictionary::Store::index_capacity(size_t n) {
  size_t capacity = initial_index_slots;
  while (n * 100 > capacity * index_load_percent) capacity *= 2;
  return capacity;
}

bool StringDictionary::adopt(std::unique_ptr<char[]> bytes, const std::vector<std::string_view>& entries,
                             const std::function<void()>& tick, StringDictionary& out) {
  auto store = std::make_shared<Store>();
  if (!store->adopt(std::move(bytes), entries, tick)) return false;
  out.store_ = std::move(store);
  out.size_ = static_cast<int32_t>(entries.size());
  out.borrowed_ = false;
  return true;
}

bool StringDictionary::Store::adopt(std::unique_ptr<char[]> bytes, const std::vector<std::string_view>& entries,
                                    const std::function<void()>& tick) {
  if (entries.size() > static_cast<size_t>(INT32_MAX)) throw std::length_error("text dictionary is full");
  const auto n = static_cast<int32_t>(entries.size());
  for (int32_t code = 0; code < n; ++code) {
    const auto [segment, offset] = locate(static_cast<uint64_t>(code));
    if (offset == 0) segments_[segment] = new std::string_view[first_segment_entries << segment];
    segments_[segment][offset] = entries[static_cast<size_t>(code)];
  }
  if (bytes) arenas_.push_back(std::move(bytes));
  // Every hash first (the entries read in order), then each entry placed
  // with the slots of later ones already on their way into the cache: an
  // index of millions of entries misses the cache at every slot.
  std::vector<uint64_t> hashes(entries.size());
  for (size_t e = 0; e < entries.size(); ++e) {
    if ((e & 0xFFFF) == 0 && tick) tick();
    hashes[e] = hash(entries[e]);
  }
  auto index = std::make_unique<Index>(index_capacity(entries.size()), tick);
  constexpr size_t ahead = 16;
  for (size_t e = 0; e < entries.size(); ++e) {
    if ((e & 0xFFFF) == 0 && tick) tick();
    if (e + ahead < entries.size()) __builtin_prefetch(&index->slots[hashes[e + ahead] & index->mask]);
    const uint64_t h = hashes[e];
    size_t i = h & index->mask;
    for (int32_t code; (code = index->slots[i].code.load(std::memory_order_relaxed)) >= 0; i = (i + 1) & index->mask) {
      if (index->slots[i].hash.load(std::memory_order_relaxed) == h && at(code) == entries[e]) return false;
    }
    index->slots[i].hash.store(h, std::memory_order_relaxed);
    index->slots[i].code.store(static_cast<int32_t>(e), std::memory_order_relaxed);
  }
  indexes_.clear();
  indexes_.push_back(std::move(index));
  // Release: a reader that sees the index and the count sees every entry.
  index_.store(indexes_.back().get(), std::memory_order_release);
  count_.store(n, std::memory_order_release);
  return true;
}

StringDictionary::Store::Store() {
  indexes_.push_back(std::make_unique<Index>(initial_index_slots));
  index_.store(indexes_.back().get(), std::memory_order_release);
}

StringDictionary::Store::~Store() {
  for (std::string_view* s : segments_) delete[] s;
}

int32_t StringDictionary::Store::find_in(const Index* index, std::string_view value, uint64_t h) const {
  for (size_t i = h & index->mask;; i = (i + 1) & index->mask) {
    const Slot& s = index->slots[i];
    const int32_t code = s.code.load(std::memory_order_acquire);
    if (code < 0) return -1;
    if (s.hash.load(std::memory_order_relaxed) == h && at(code) == value) return code;
  }
}

void StringDictionary::Store::find_many(std::span<Probe> probes, int32_t limit) const {
  // A software pipeline of four stages, `ahead` probes apart: load the home
  // slot; read its code and load the entry; load the entry's bytes; probe
  // (by then all in cache, unless the home slot was another value's). One
  // index for the whole batch: entries added meanwhile may be missed, as a
  // find that starts before they are added misses them.
  constexpr size_t ahead = 8;
  const Index* index = index_.load(std::memory_order_acquire);
  const size_t n = probes.size();
  for (size_t i = 0; i < n + 3 * ahead; ++i) {
    if (i < n) __builtin_prefetch(&index->slots[probes[i].hash & index->mask]);
    if (i >= ahead && i - ahead < n) {
      Probe& p = probes[i - ahead];
      // Acquire: the entry of a code seen here is readable (add() publishes it first).
      p.code = index->slots[p.hash & index->mask].code.load(std::memory_order_acquire);
      if (p.code >= 0) {
        const auto [segment, offset] = locate(static_cast<uint64_t>(p.code));
        __builtin_prefetch(&segments_[segment][offset]);
      }
    }
    if (i >= 2 * ahead && i - 2 * ahead < n) {
      const Probe& p = probes[i - 2 * ahead];
      if (p.code >= 0) __builtin_prefetch(at(p.code).data());
    }
    if (i >= 3 * ahead) {
      Probe& p = probes[i - 3 * ahead];
      const int32_t code = find_in(index, p.value, p.hash);
      p.code = code < limit ? code : -1;
    }
  }
}

void StringDictionary::Store::place(Index& index, uint64_t h, int32_t code) {
  size_t i = h & index.mask;
  while (index.slots[i].code.load(std::memory_order_relaxed) >= 0) i = (i + 1) & index.mask;
  index.slots[i].hash.store(h, std::memory_order_relaxed);
  // Release: a reader that sees the code sees the hash and the entry.
  index.slots[i].code.store(code, std::memory_order_release);
}

const char* StringDictionary::Store::copy_bytes(std::string_view value) {
  if (value.size() > arena_left_) {
    const size_t bytes = std::max(arena_block_bytes, value.size());
    arenas_.push_back(std::make_unique_for_overwrite<char[]>(bytes));
    arena_next_ = arenas_.back().get();
    arena_left_ = bytes;
  }
  char* out = arena_next_;
  if (!value.empty()) std::memcpy(out, value.data(), value.size());
  arena_next_ += value.size();
  arena_left_ -= value.size();
  return out;
}

int32_t StringDictionary::Store::add(std::string_view value, uint64_t h) {
  const int32_t code = count_.load(std::memory_order_relaxed);
  if (code == INT32_MAX) throw std::length_error("text dictionary is full");
  const auto [segment, offset] = locate(static_cast<uint64_t>(code));
  if (offset == 0) segments_[segment] = new std::string_view[first_segment_entries << segment];
  segments_[segment][offset] = std::string_view(copy_bytes(value), value.size());
  Index* index = index_.load(std::memory_order_relaxed);
  if ((static_cast<size_t>(code) + 1) * 100 > (index->mask + 1) * index_load_percent) {
    auto grown = std::make_unique<Index>((index->mask + 1) * 2);
    for (size_t i = 0; i <= index->mask; ++i) {
      const int32_t c = index->slots[i].code.load(std::memory_order_relaxed);
      if (c >= 0) place(*grown, index->slots[i].hash.load(std::memory_order_relaxed), c);
    }
    index = grown.get();
    indexes_.push_back(std::move(grown));
    index_.store(index, std::memory_order_release);
  }
  place(*index, h, code);
  count_.store(code + 1, std::memory_order_release);
  return code;
}

namespace {

class DictionaryEntries final : public TextEntries {
 public:
  explicit DictionaryEntries(std::shared_ptr<const StringDictionary> dictionary) : dictionary_(std::move(dictionary)) {}
  int32_t size() const override { return dictionary_->size(); }
  std::string_view at(int32_t code) const override { return dictionary_->at(code); }
  std::weak_ptr<const void> identity() const override { return dictionary_->store_identity(); }

 private:
  std::shared_ptr<const StringDictionary> dictionary_;
};

}  // namespace

std::shared_ptr<const TextEntries> dictionary_entries(std::shared_ptr<const StringDictionary> dictionary) {
  return std::make_shared<const DictionaryEntries>(std::move(dictionary));
}

}  // namespace tally::storage
