#include "storage/chunk_cache.hpp"

#include <functional>

namespace tally::storage {
namespace {

uint64_t batch_bytes(const ChunkBatch& b) {
  uint64_t n = 0;
  for (const auto& c : b.columns) n += c.data.size() + c.validity.size();
  return n;
}

}  // namespace

std::string ChunkCache::key(uint32_t oid, uint64_t chunk_id, const std::vector<int>& columns) {
  std::string k = std::to_string(oid) + ':' + std::to_string(chunk_id) + ':';
  for (int c : columns) {
    k += std::to_string(c);
    k += ',';
  }
  return k;
}

std::shared_ptr<const ChunkBatch> ChunkCache::get(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->batch;
}

void ChunkCache::put(const std::string& key, uint32_t oid, std::shared_ptr<const ChunkBatch> batch) {
  const uint64_t size = batch_bytes(*batch);
  std::lock_guard lock(mutex_);
  if (size > capacity_) return;
  if (auto it = index_.find(key); it != index_.end()) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  // The chunk id is the second field of the key.
  const size_t a = key.find(':'), b = key.find(':', a + 1);
  const uint64_t chunk_id = std::stoull(key.substr(a + 1, b - a - 1));
  lru_.push_front({key, oid, chunk_id, size, std::move(batch)});
  index_[key] = lru_.begin();
  bytes_ += size;
  while (bytes_ > capacity_ && !lru_.empty()) {
    bytes_ -= lru_.back().bytes;
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

void ChunkCache::evict_if(const std::function<bool(const Entry&)>& pred) {
  std::lock_guard lock(mutex_);
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (pred(*it)) {
      bytes_ -= it->bytes;
      index_.erase(it->key);
      it = lru_.erase(it);
    } else {
      ++it;
    }
  }
}

void ChunkCache::evict_table(uint32_t oid) {
  evict_if([oid](const Entry& e) { return e.oid == oid; });
}

void ChunkCache::evict_chunk(uint32_t oid, uint64_t chunk_id) {
  evict_if([oid, chunk_id](const Entry& e) { return e.oid == oid && e.chunk_id == chunk_id; });
}

uint64_t ChunkCache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace tally::storage
