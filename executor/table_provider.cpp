#include "executor/table_provider.hpp"

#include "common/engine_counters.hpp"

namespace tally::executor {

std::shared_ptr<const storage::ChunkBatch> MemoryTable::read_chunk(size_t chunk,
                                                                   const std::vector<int>& column_indexes) const {
  const auto& full = chunks_.at(chunk);
  auto out = std::make_shared<storage::ChunkBatch>();
  out->rows = full->rows;
  uint64_t bytes = 0;
  for (int c : column_indexes) {
    out->columns.push_back(full->columns.at(static_cast<size_t>(c)));
    bytes += out->columns.back().data.size() + out->columns.back().validity.size();
  }
  count_scan(out->rows, bytes);  // /metrics and the statement's log line
  return out;
}

ChunkColumnStats MemoryTable::stats(size_t chunk, int column) const {
  return stats_.at(chunk).at(static_cast<size_t>(column));
}

void MemoryTable::append(std::shared_ptr<const storage::ChunkBatch> chunk) {
  std::vector<ChunkColumnStats> stats(chunk->columns.size());
  for (size_t c = 0; c < chunk->columns.size(); ++c) {
    const auto& col = chunk->columns[c];
    const TypeId id = col.type.id;
    if (id != TypeId::int2 && id != TypeId::int4 && id != TypeId::int8 && id != TypeId::date) continue;
    ChunkColumnStats s;
    s.known = true;
    s.min = INT64_MAX;
    s.max = INT64_MIN;
    for (size_t r = 0; r < col.rows; ++r) {
      if (col.is_null(r)) { ++s.null_count; continue; }
      int64_t v = id == TypeId::int2 ? col.values<int16_t>()[r]
                : id == TypeId::int8 ? col.values<int64_t>()[r]
                                     : col.values<int32_t>()[r];
      s.min = std::min(s.min, v);
      s.max = std::max(s.max, v);
    }
    stats[c] = s;
  }
  stats_.push_back(std::move(stats));
  chunks_.push_back(std::move(chunk));
}

std::shared_ptr<const TableSnapshot> MemoryTableProvider::find_table(std::string_view schema, std::string_view name) {
  if (!schema.empty() && schema != "public") return nullptr;
  std::lock_guard lock(mutex_);
  auto it = tables_.find(name);
  return it == tables_.end() ? nullptr : it->second;
}

void MemoryTableProvider::put(std::shared_ptr<MemoryTable> table) {
  std::lock_guard lock(mutex_);
  tables_[table->name()] = std::move(table);
}

}  // namespace tally::executor
