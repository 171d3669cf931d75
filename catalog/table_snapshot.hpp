#pragma once
// What a reader sees of one table: its definition, the committed chunk list
// with per-chunk statistics, and the committed sizes of its text dictionaries.
// Immutable once published: a query holds a shared_ptr to one snapshot for its
// whole run, so it never sees half of a concurrent load.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/sql_type.hpp"

namespace tally::catalog {

struct ColumnDef {
  std::string name;
  SqlType type;
  bool not_null = false;
};

struct TableDef {
  uint32_t oid = 0;
  std::string schema = "public";
  std::string name;
  std::vector<ColumnDef> columns;

  // Index of the column named `name` (exact, already case-folded), or -1.
  int find_column(std::string_view column_name) const {
    for (size_t i = 0; i < columns.size(); ++i)
      if (columns[i].name == column_name) return static_cast<int>(i);
    return -1;
  }
};

// Statistics of one column of one chunk (non-NULL values only).
struct ColumnStats {
  uint64_t null_count = 0;
  // min/max over non-NULL values, present when null_count < rows. Integer-like
  // types (bool, int2/4/8, date, timestamp, numeric scaled, text dictionary
  // codes) use the *_int fields, float4/float8 the *_float fields (NaN excluded).
  bool has_min_max = false;
  int64_t min_int = 0, max_int = 0;
  double min_float = 0, max_float = 0;
  // HyperLogLog sketch in executor/estimate/hll_sketch.hpp's serialized format
  // (version byte, precision byte, 2^p registers). Empty when not computed.
  std::vector<uint8_t> hll;
};

struct ChunkInfo {
  uint64_t chunk_id = 0;  // unique within the table, never reused
  uint64_t rows = 0;
  std::vector<ColumnStats> stats;  // one per table column
};

// Committed state of one text column's append-only dictionary file.
struct DictionaryState {
  uint64_t entries = 0;  // number of codes
  uint64_t bytes = 0;    // committed file length
  uint32_t crc = 0;      // CRC32C of the first `bytes` bytes
};

struct TableSnapshot {
  TableDef def;
  std::vector<ChunkInfo> chunks;
  std::vector<DictionaryState> dictionaries;  // one per column (zeros for non-text)
  uint64_t next_chunk_id = 1;
  // Bumped by every commit that changes the table (append, truncate).
  uint64_t version = 0;

  uint64_t row_count() const {
    uint64_t n = 0;
    for (const auto& c : chunks) n += c.rows;
    return n;
  }
};

}  // namespace tally::catalog
