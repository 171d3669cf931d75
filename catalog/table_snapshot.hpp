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
  // The column's DEFAULT as PostgreSQL prints it (pg_get_expr of adbin): a
  // constant ("0", "'x'::text") or nextval('t_id_seq'::regclass) for serial
  // and identity columns; empty: no default (NULL).
  std::string default_expr;
  // attidentity: 'a' GENERATED ALWAYS, 'd' BY DEFAULT AS IDENTITY, 0 none.
  char identity = 0;
};

// A PRIMARY KEY or UNIQUE constraint (or a CREATE UNIQUE INDEX, which
// enforces the same): the columns whose values no two rows may share (rows
// with a NULL in any of them excepted). PostgreSQL gives the constraint and
// its index an oid each; clients join pg_constraint.conindid to pg_index, so
// both are kept.
struct KeyConstraint {
  std::string name;            // the constraint's name, also its index's
  bool primary = false;
  bool constraint = true;      // false: a bare CREATE [UNIQUE] INDEX (no pg_constraint row)
  bool unique = true;          // false: a plain CREATE INDEX, recorded only
  std::vector<int> columns;    // indexes into TableDef::columns
  uint32_t oid = 0;            // pg_constraint.oid (assigned by the catalog)
  uint32_t index_oid = 0;      // pg_index.indexrelid / pg_class.oid of the index
};

struct TableDef {
  uint32_t oid = 0;
  std::string schema = "public";
  std::string name;
  std::vector<ColumnDef> columns;
  std::vector<KeyConstraint> keys;

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
