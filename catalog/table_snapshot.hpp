#pragma once
// What a reader sees of one table: its definition, the committed chunk list
// with per-chunk statistics, and the committed sizes of its text dictionaries.
// Immutable once published: a query holds a shared_ptr to one snapshot for its
// whole run, so it never sees half of a concurrent load.
#include <algorithm>
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
  // The number in the names of this column's chunk and dictionary files
  // (-1: its index; TableDef::slot). DROP COLUMN moves the columns after the
  // dropped one down without renaming their files, and a slot is never given
  // to a second column, so a file name always means one column's bytes.
  int32_t slot = -1;
  // ADD COLUMN on a table with rows does not rewrite them (PostgreSQL's
  // attmissingval): chunks whose id is below first_chunk have no file for
  // this column, and each of their rows reads `missing`, one value in
  // storage form (storage_width bytes; text: its int32 dictionary code), or
  // NULL when absent.
  uint64_t first_chunk = 0;
  std::optional<std::string> missing;
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
  // The lowest slot no column of this table has had (0: none beyond the
  // column count was ever given).
  int32_t next_slot = 0;

  // The file slot of column `column`.
  int32_t slot(size_t column) const {
    return columns[column].slot >= 0 ? columns[column].slot : static_cast<int32_t>(column);
  }
  // A slot for a new column: one no column of this table has had.
  int32_t unused_slot() const {
    int32_t n = std::max(next_slot, static_cast<int32_t>(columns.size()));
    for (size_t i = 0; i < columns.size(); ++i) n = std::max(n, slot(i) + 1);
    return n;
  }
  // Makes every column's slot explicit, as ADD and DROP COLUMN need before
  // they add or remove a column (an implicit slot follows the index).
  void pin_slots() {
    next_slot = unused_slot();
    for (size_t i = 0; i < columns.size(); ++i) columns[i].slot = slot(i);
  }
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
  // Its columns' stored bytes are blobs in the catalog (tally_chunk_bytes),
  // not files: a small chunk (a small CREATE TABLE AS, an INSERT) then
  // costs its commit no new file, and no directory sync.
  bool inlined = false;
  // An inlined chunk's stored bytes (by column file slot, as
  // storage/chunk_file.hpp encodes them) until it is committed: the catalog
  // inserts them and publishes the chunk without them; readers of a block's
  // uncommitted snapshot read them here.
  using StoredColumns = std::vector<std::pair<int, std::vector<uint8_t>>>;
  std::shared_ptr<const StoredColumns> stored;
};

// Where a committed change left stored bytes of inlined chunks that readers
// of older snapshots may still read: deleted later (Catalog::forget_chunk_bytes).
// No chunk_id: every chunk of the table; no slot: every column of the chunk.
struct ChunkBytesKey {
  uint32_t oid = 0;
  std::optional<uint64_t> chunk_id;
  std::optional<int> slot;
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
