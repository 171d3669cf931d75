#pragma once
// The SQLite catalog in <data_dir>/catalog.sqlite3 (WAL, synchronous=FULL):
// tables, columns, each table's chunk list with per-chunk statistics, and the
// committed sizes of text dictionaries. Readers get immutable TableSnapshots
// from an in-memory copy that is replaced only after a SQLite commit, so a
// snapshot always matches committed, durable state. Thread-safe.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "catalog/table_snapshot.hpp"

struct sqlite3;

namespace tally::catalog {

class Catalog {
 public:
  // Opens (creating when absent) <data_dir>/catalog.sqlite3 and loads every table.
  // Throws Error(58030 io_error) when the database cannot be opened.
  explicit Catalog(const std::string& data_dir);
  ~Catalog();
  Catalog(const Catalog&) = delete;
  Catalog& operator=(const Catalog&) = delete;

  const std::string& data_dir() const { return data_dir_; }
  std::string database_path() const;

  // The committed snapshot of schema.name (names already case-folded), or
  // nullptr when there is no such table.
  std::shared_ptr<const TableSnapshot> find_table(std::string_view name,
                                                  std::string_view schema = "public") const;
  std::shared_ptr<const TableSnapshot> find_table(uint32_t oid) const;
  // Every table, ordered by name.
  std::vector<std::shared_ptr<const TableSnapshot>> tables() const;

  // Creates a table (def.oid is assigned unless the caller reserved one
  // with reserve_oid). Throws 42P07 `relation "x" already
  // exists`; returns nullptr instead when if_not_exists and it exists.
  std::shared_ptr<const TableSnapshot> create_table(TableDef def, bool if_not_exists = false);
  // Replaces a table's definition (names, NOT NULL, keys; same columns in
  // the same storage types): ALTER TABLE and CREATE INDEX. Keys without oids
  // get them. Throws 42P07 when the new name is another table's.
  // ADD and DROP COLUMN (layout given) may change the columns too: layout
  // holds the same chunks with one statistics entry per new column, and one
  // dictionary state per new column, committed with the definition.
  struct ColumnLayout {
    std::vector<ChunkInfo> chunks;
    std::vector<DictionaryState> dictionaries;
  };
  std::shared_ptr<const TableSnapshot> replace_definition(const TableDef& def, const ColumnLayout* layout = nullptr);
  // Removes a table's catalog rows. Returns false when it does not exist.
  bool drop_table(uint32_t oid);
  // Empties the chunk list and the dictionaries (chunk ids keep increasing).
  std::shared_ptr<const TableSnapshot> truncate_table(uint32_t oid);
  // Commits an append in one SQLite transaction: adds new_chunks, removes the
  // chunks listed in replaced_chunk_ids (a small tail chunk merged into the
  // new ones), and records the new dictionary states.
  // Inlined new chunks' bytes (ChunkInfo::stored) are inserted with them.
  std::shared_ptr<const TableSnapshot> commit_append(uint32_t oid, const std::vector<ChunkInfo>& new_chunks,
                                                     const std::vector<uint64_t>& replaced_chunk_ids,
                                                     const std::vector<DictionaryState>& dictionaries,
                                                     uint64_t next_chunk_id);

  // A transaction block's changes, committed together by commit_changes.
  struct TableChange {
    std::shared_ptr<const TableSnapshot> before;  // the committed table; null: created by the block
    std::shared_ptr<const TableSnapshot> after;   // its new state; null: dropped by the block
  };
  // An oid for a table a transaction block creates (committed with it, or never used).
  uint32_t reserve_oid();
  // Commits every change in one SQLite transaction, then publishes the new
  // snapshots together: drops, creations (42P07 when another session
  // committed the name first), and each changed table's chunk list (chunks
  // not in `after` removed, new ones added) and dictionary states.
  //
  // `files_synced`, where every change creates a table: the one-round
  // commit (storage/write_transaction.hpp), whose files are synced while
  // SQLite commits. Called after the SQLite commit, outside the catalog's
  // lock (the names stay taken), before the tables are published; they are
  // recorded unsynced until a later commit, or the start-up check
  // (TableStore::recover), knows their files whole. Where it throws, the
  // tables' rows are deleted again and the exception passes on.
  void commit_changes(const std::vector<TableChange>& changes, const std::function<void()>& files_synced = {});
  // Tables recorded unsynced: a crash may have come before their files were.
  std::vector<uint32_t> unsynced_tables() const;
  // The start-up check found an unsynced table's files whole.
  void mark_synced(uint32_t oid);

  // The stored bytes of column `slot` of an inlined chunk; nullopt when the
  // catalog has none.
  std::optional<std::vector<uint8_t>> chunk_bytes(uint32_t oid, uint64_t chunk_id, int slot) const;
  // Stored bytes no reader can reach any more (their chunks retired): deleted
  // in the next commit_append or commit_changes, so that no commit pays a
  // sync of its own for them; a crash before then leaves them to
  // delete_unreachable_chunk_bytes.
  void forget_chunk_bytes(std::vector<ChunkBytesKey> keys);
  // Start-up: deletes stored bytes whose chunk is not committed or whose
  // column slot is not the table's. Returns the number of rows deleted.
  size_t delete_unreachable_chunk_bytes();

  // For catalog/tuning_cache.* (which keeps its own tables in this database):
  // the connection and the mutex that serializes every use of it.
  sqlite3* handle() const { return db_; }
  std::mutex& mutex() const { return mutex_; }

 private:
  void create_schema();
  void load();
  void exec(const char* sql);
  void publish(std::shared_ptr<const TableSnapshot> snapshot);
  // Whether a one-round commit is creating schema.name (committed, not yet published).
  bool being_created(std::string_view schema, std::string_view name) const;
  // Whether schema.name is a table's, or being created.
  bool name_taken(std::string_view schema, std::string_view name) const;

  std::string data_dir_;
  sqlite3* db_ = nullptr;
  mutable std::mutex mutex_;
  uint32_t next_oid_ = 16384;  // PostgreSQL's FirstNormalObjectId
  std::unordered_map<uint32_t, std::shared_ptr<const TableSnapshot>> by_oid_;
  // One-round commits between their SQLite commit and their publication:
  // the (schema, name) of each table they create.
  std::vector<std::pair<std::string, std::string>> creating_;
  // Tables recorded unsynced: at start-up those a crash may have left, then
  // those one-round commits published since (their files synced); the next
  // commit_changes clears the published ones' flags.
  std::vector<uint32_t> unsynced_;
  std::vector<uint32_t> synced_since_;
  std::vector<ChunkBytesKey> forgotten_bytes_;  // forget_chunk_bytes's, not deleted yet
  // Deletes forgotten_bytes_'s rows within the caller's transaction.
  void delete_forgotten_bytes();
};

}  // namespace tally::catalog
