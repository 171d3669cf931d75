#pragma once
// Host-memory LRU cache of decoded chunk batches, keyed by (table oid, chunk
// id, column projection), bounded in bytes. Chunk ids are never reused within
// a table and table oids never reused, so a key always names the same bytes;
// TRUNCATE/DROP still evict eagerly to free memory.
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "storage/column_vector.hpp"

namespace tally::storage {

class ChunkCache {
 public:
  explicit ChunkCache(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

  static std::string key(uint32_t oid, uint64_t chunk_id, const std::vector<int>& columns);
  std::shared_ptr<const ChunkBatch> get(const std::string& key);
  void put(const std::string& key, uint32_t oid, std::shared_ptr<const ChunkBatch> batch);
  // Evicts every batch of the table (all chunks), or of one chunk.
  void evict_table(uint32_t oid);
  void evict_chunk(uint32_t oid, uint64_t chunk_id);
  uint64_t bytes() const;

 private:
  struct Entry {
    std::string key;
    uint32_t oid;
    uint64_t chunk_id;
    uint64_t bytes;
    std::shared_ptr<const ChunkBatch> batch;
  };
  void evict_if(const std::function<bool(const Entry&)>& pred);

  mutable std::mutex mutex_;
  uint64_t capacity_;
  uint64_t bytes_ = 0;
  std::list<Entry> lru_;  // front = most recent
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace tally::storage
