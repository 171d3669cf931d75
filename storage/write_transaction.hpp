#pragma once
// The writes of one transaction block (BEGIN ... COMMIT). Its appends write
// chunk files and dictionary entries as autocommit appends do, but record the
// table's new chunk list here instead of in the catalog, and leave the
// fsyncs to commit(), which makes them all durable before the catalog commit; CREATE,
// DROP and TRUNCATE are recorded the same way. commit() publishes all of it
// in one catalog (SQLite) transaction; rollback(), or destruction without
// commit(), removes the block's files and leaves the tables as they were. A
// crash before the commit leaves only orphan files, which TableStore::recover
// removes.
//
// A block that only creates tables, with small files (CREATE TABLE AS of a
// small answer), commits in one round: its files are synced while SQLite
// commits, and the tables are published once both are done. The catalog
// records them unsynced until a later commit; after a crash,
// TableStore::recover reads their files back and removes a table whose
// files are not whole (its commit was never acknowledged: the client got no
// reply before both syncs had finished).
//
// The block holds the write lock of each table it writes until it ends
// (TableLocks), so its uncommitted chunks and dictionary tail cannot be
// interleaved with another writer's: a second writer of the table waits.
// Readers of other sessions keep seeing the committed snapshots; this
// block's own statements see its working snapshots (find_table).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string_view>
#include <vector>

#include "catalog/table_snapshot.hpp"

namespace tally {
class CancelToken;
}

namespace tally::storage {

struct ChunkBatch;
class StringDictionary;
class TableAppender;
class TableStore;

class WriteTransaction {
 public:
  // cancel: the session's token, which makes waits for a table's writer cancellable.
  explicit WriteTransaction(TableStore& store, const CancelToken* cancel = nullptr);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;

  // The table as this block sees it: its own working version when it wrote
  // the table, else the committed one; nullptr when missing or dropped here.
  std::shared_ptr<const catalog::TableSnapshot> find_table(std::string_view name) const;
  // Whether this block created, dropped or wrote a table named `name`.
  bool changed(std::string_view name) const;

  // The writes, as TableStore's methods of the same names but uncommitted.
  std::shared_ptr<const catalog::TableSnapshot> create_table(catalog::TableDef def, bool if_not_exists);
  void drop_table(uint32_t oid);
  void truncate_table(uint32_t oid);
  std::unique_ptr<TableAppender> begin_append(uint32_t oid);
  // Takes the table's write lock until the block ends, writing nothing
  // (SELECT ... FOR UPDATE); 42P01 when the table is missing.
  void lock_table(uint32_t oid) { touch(oid); }
  // TableStore::alter_table, uncommitted.
  std::shared_ptr<const catalog::TableSnapshot> alter_table(
      uint32_t oid, const std::function<catalog::TableDef(const catalog::TableSnapshot&)>& change);

  // Writes recorded so far.
  uint64_t writes() const { return writes_; }

  // SAVEPOINT / ROLLBACK TO SAVEPOINT: what the block had written when the
  // savepoint was made; rollback_to undoes every write since (removing the
  // files it wrote). Table locks taken since are kept, as PostgreSQL keeps them.
  struct Savepoint;
  std::shared_ptr<const Savepoint> savepoint() const;
  void rollback_to(const Savepoint& savepoint);

  // Publishes every write atomically; throws (and then rolls back) when the
  // catalog commit fails.
  void commit();
  // Discards every write. Idempotent.
  void rollback();

 private:
  friend class TableAppender;
  struct Pending {
    std::shared_ptr<const catalog::TableSnapshot> base;     // committed when first written; null: created here
    std::shared_ptr<const catalog::TableSnapshot> working;  // null: dropped here
    std::vector<uint64_t> own_chunks;                       // chunk ids this block wrote files for
    // By file slot: the newest appender dictionary of each text column this
    // block appended to, published to the store at commit (as an autocommit
    // append publishes its own), so that readers need not load it from disk.
    std::map<int, std::shared_ptr<const StringDictionary>> dictionaries;
    // Chunks its appends wrote, decoded, for TableStore::cache_written at commit.
    std::vector<std::pair<uint64_t, std::shared_ptr<ChunkBatch>>> written;
    bool locked = false;
  };
  // The table's pending entry, taking its write lock on first use. Throws
  // 42P01 when the table does not exist (or this block dropped it).
  Pending& touch(uint32_t oid);
  // An append's result (TableAppender::commit in a block).
  // dictionaries: by column of working's definition (null: not a text column).
  void record_append(uint32_t oid, std::shared_ptr<const catalog::TableSnapshot> working,
                     const std::vector<uint64_t>& written_chunks,
                     const std::vector<std::shared_ptr<const StringDictionary>>& dictionaries,
                     std::vector<std::pair<uint64_t, std::shared_ptr<ChunkBatch>>> written);
  void publish_dictionaries(const Pending& p) const;
  void remove_own_files(uint32_t oid, const Pending& p, bool keep_live);
  void release_locks();
  // fsyncs the files the committed state will reference (the block's appends
  // skip it), and the directories that name them, all at once.
  // The files and directories commit() syncs.
  void sync_targets(std::vector<std::string>& files, std::vector<std::string>& directories) const;

  void remove_chunks(uint32_t oid, const catalog::TableDef& def, const std::vector<uint64_t>& ids);

  TableStore& store_;
  const CancelToken* cancel_;
  std::map<uint32_t, Pending> tables_;
  uint64_t writes_ = 0;
  uint64_t written_bytes_ = 0;  // of chunks kept for the cache (Pending::written), all tables
  bool done_ = false;
};

}  // namespace tally::storage
