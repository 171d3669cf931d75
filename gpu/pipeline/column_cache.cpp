// LRU bookkeeping of the device column cache (column_cache.hpp). Host code
// only: the device memory itself is allocated by chunk_pipeline.cu and freed
// by ~DeviceColumn (device_column.cu, or gpu_stub.cpp without CUDA).
#include "gpu/pipeline/column_cache.hpp"

#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/engine_counters.hpp"

namespace tally::gpu {

namespace {
struct KeyHash {
  size_t operator()(const ColumnKey& k) const noexcept {
    uint64_t h = k.table * 0x9E3779B97F4A7C15ull;
    h = (h ^ k.chunk) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (uint64_t{k.column} << 8 | k.width_bytes)) * 0x94D049BB133111EBull;
    return static_cast<size_t>(h ^ (h >> 31));
  }
};
}  // namespace

struct ColumnCache::State {
  struct Entry {
    ColumnKey key;
    std::shared_ptr<const DeviceColumn> column;
  };
  mutable std::mutex mutex;
  std::list<Entry> lru;  // front = most recently used
  std::unordered_map<ColumnKey, std::list<Entry>::iterator, KeyHash> index;
  uint64_t resident = 0;
  ColumnCacheStats counts;
};

ColumnCache::ColumnCache(int device, uint64_t capacity_bytes)
    : device_(device), capacity_(capacity_bytes), state_(std::make_unique<State>()) {}

ColumnCache::~ColumnCache() { clear(); }

std::shared_ptr<const DeviceColumn> ColumnCache::find(const ColumnKey& key) {
  std::lock_guard lock(state_->mutex);
  auto it = state_->index.find(key);
  if (it == state_->index.end()) {
    ++state_->counts.misses;
    count(engine_counters().gpu_cache_misses);
    return nullptr;
  }
  state_->lru.splice(state_->lru.begin(), state_->lru, it->second);
  ++state_->counts.hits;
  count(engine_counters().gpu_cache_hits);
  return it->second->column;
}

bool ColumnCache::contains(uint64_t table, uint64_t chunk, uint32_t column) const {
  std::lock_guard lock(state_->mutex);
  for (const uint8_t width : {uint8_t{4}, uint8_t{8}}) {
    if (state_->index.count(ColumnKey{table, chunk, column, width})) return true;
  }
  return false;
}

void ColumnCache::insert(const ColumnKey& key, std::shared_ptr<const DeviceColumn> column) {
  if (!column) return;
  // Evicted entries are released outside the lock: their destructor may wait
  // for the device.
  std::vector<std::shared_ptr<const DeviceColumn>> released;
  {
    std::lock_guard lock(state_->mutex);
    if (!admits(column->bytes)) {
      ++state_->counts.rejected;
      return;
    }
    if (state_->index.count(key)) return;
    while (state_->resident + column->bytes > capacity_ && !state_->lru.empty()) {
      State::Entry& victim = state_->lru.back();
      state_->resident -= victim.column->bytes;
      released.push_back(std::move(victim.column));
      state_->index.erase(victim.key);
      state_->lru.pop_back();
      ++state_->counts.evictions;
    }
    state_->resident += column->bytes;
    state_->lru.push_front(State::Entry{key, std::move(column)});
    state_->index.emplace(key, state_->lru.begin());
    engine_counters().gpu_cache_bytes.store(state_->resident, std::memory_order_relaxed);
  }
}

void ColumnCache::clear() {
  std::list<State::Entry> released;
  {
    std::lock_guard lock(state_->mutex);
    released.swap(state_->lru);
    state_->index.clear();
    state_->resident = 0;
    engine_counters().gpu_cache_bytes.store(0, std::memory_order_relaxed);
  }
}

ColumnCacheStats ColumnCache::stats() const {
  std::lock_guard lock(state_->mutex);
  ColumnCacheStats s = state_->counts;
  s.capacity_bytes = capacity_;
  s.resident_bytes = state_->resident;
  s.entries = state_->index.size();
  return s;
}

}  // namespace tally::gpu
