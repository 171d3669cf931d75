#pragma once
// The columnar table store: chunk column files and text dictionaries under
// <data_dir>/tables/<oid>/, published through the catalog. Appends (see
// TableAppender) write and fsync files, then commit the chunk list in one
// SQLite transaction; start-up (recover) removes what uncommitted appends
// left behind. Readers get decoded chunks from a host-memory cache.
// Thread-safe: any number of readers; one writer per table at a time (an
// append, DROP, TRUNCATE, or a transaction block that wrote it: TableLocks).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <mutex>
#include <thread>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/cancel.hpp"
#include "catalog/catalog.hpp"
#include "storage/append_check.hpp"
#include "storage/chunk_cache.hpp"
#include "storage/column_vector.hpp"
#include "storage/group_commit.hpp"
#include "storage/table_locks.hpp"

namespace tally::storage {

class TableAppender;

struct StoreOptions {
  uint32_t chunk_rows = 1u << 20;          // Config::chunk_rows
  uint64_t cache_bytes = uint64_t{8} << 30;  // decoded-chunk cache budget
  // An append first merges a committed tail chunk smaller than this into its
  // own first chunk, so that many small INSERTs do not leave many tiny chunks.
  // Small, because each such append rewrites the tail: 4096 rows bounds that
  // to ~100 KB per INSERT while single-row INSERTs still make 4096-row chunks.
  uint32_t merge_tail_below_rows = 1u << 12;
  // A part chunk whose stored bytes (all columns) are at most this many is
  // kept in the catalog instead of files (catalog::ChunkInfo::inlined): its
  // commit is one SQLite WAL sync, where files cost their own syncs and
  // their directory's. 0: every chunk in files.
  uint64_t inline_chunk_bytes = uint64_t{256} << 10;
  // append_grouped joins concurrent small appends into one commit
  // (group_commit.hpp); off only to measure what that saves (insert_rate_bench).
  bool group_commit = true;
};

class TableStore {
 public:
  TableStore(catalog::Catalog& catalog, StoreOptions options = {});
  ~TableStore();

  catalog::Catalog& catalog() { return catalog_; }
  const StoreOptions& options() const { return options_; }

  // Start-up recovery: removes the tables of one-round commits a crash cut
  // short (catalog::Catalog::unsynced_tables whose files do not read back
  // whole), chunk files no committed chunk references, directories of tables
  // that no longer exist, and uncommitted dictionary tails. Returns the number
  // of tables, files and directories removed.
  size_t recover();

  // The columns (indexes into snapshot.def.columns) of chunk chunk_index of the
  // snapshot, decoded; text columns carry the column dictionary. Throws
  // Error(XX001) naming the table and chunk when a file is missing or corrupted.
  // A set `cancel` stops a dictionary's first load with its error.
  std::shared_ptr<const ChunkBatch> read_chunk(const catalog::TableSnapshot& snapshot, size_t chunk_index,
                                               std::span<const int> columns, const CancelToken* cancel = nullptr);
  // The dictionary of a text column, holding at least the snapshot's codes.
  // Dictionaries only grow: every dictionary of a column is a prefix of the
  // newest, so codes compare equal across chunks (compare codes, not pointers).
  // Loaded from its file by the first reader, whose `cancel` (if set) stops
  // the load; the next reader then loads it.
  std::shared_ptr<const StringDictionary> dictionary(const catalog::TableSnapshot& snapshot, int column,
                                                     const CancelToken* cancel = nullptr);

  // DDL. create_table makes the table's directory; drop_table and
  // truncate_table commit in the catalog first, then remove files.
  // A cancel token makes the wait for the table's writer cancellable.
  std::shared_ptr<const catalog::TableSnapshot> create_table(catalog::TableDef def, bool if_not_exists = false);
  void drop_table(uint32_t oid, const CancelToken* cancel = nullptr);
  std::shared_ptr<const catalog::TableSnapshot> truncate_table(uint32_t oid, const CancelToken* cancel = nullptr);

  // Changes a table's definition under its write lock: change gets the
  // current snapshot (and may read its rows, or throw) and returns the new
  // definition, committed by Catalog::replace_definition.
  std::shared_ptr<const catalog::TableSnapshot> alter_table(
      uint32_t oid, const std::function<catalog::TableDef(const catalog::TableSnapshot&)>& change,
      const CancelToken* cancel = nullptr);

  // Starts an append to the table (blocks while another writer holds it).
  std::unique_ptr<TableAppender> begin_append(uint32_t oid, const CancelToken* cancel = nullptr);
  // A small append (INSERT) group-committed with concurrent ones to the same
  // table (group_commit.hpp): fill adds this caller's rows to the shared
  // appender. Durable and visible when it returns; throws what fill or the
  // commit threw, and then none of fill's rows were committed.
  void append_grouped(uint32_t oid, const std::function<void(TableAppender&)>& fill,
                      const CancelToken* cancel = nullptr);
  // The check every append to a table with keys runs (append_check.hpp);
  // set once, before the first append.
  void set_append_check(AppendCheckFactory factory) { append_check_ = std::move(factory); }
  const AppendCheckFactory& append_check() const { return append_check_; }

  // Commits of append_grouped that joined more than one caller (tests, benchmarks).
  uint64_t grouped_commits(uint32_t oid);

  // Paths (for tests and tools).
  std::string table_dir(uint32_t oid) const;
  // By file slot (TableDef::slot), not column index.
  std::string chunk_path(uint32_t oid, uint64_t chunk_id, int slot) const;
  std::string dictionary_path(uint32_t oid, int slot) const;

  // Links `path` (a new table's dictionary file) to the file whose committed
  // prefix holds exactly `dictionary`'s entries, when it is a table's
  // current dictionary of a text column with nothing past its committed
  // entries (link_dictionary): a new table that takes all of them (CREATE
  // TABLE AS of a text key) does not write them again. Returns the committed
  // state the link holds; nullopt (nothing changed) otherwise. Under the
  // table's dictionary lock, so a TRUNCATE cannot swap the file meanwhile.
  std::optional<catalog::DictionaryState> link_committed_dictionary(const StringDictionary& dictionary,
                                                                    const std::string& path);

 private:
  // Whether every chunk file and committed dictionary prefix of the table
  // reads back whole (checksums included).
  bool files_whole(const catalog::TableSnapshot& snapshot) const;
  friend class TableAppender;
  friend class WriteTransaction;
  struct TableState {
    GroupCommitQueue group_commit;
    // Chunk ids handed out in this process, rolled-back appends included, so
    // an id never names two different chunks for the caches (guarded by the
    // table's write lock).
    uint64_t chunk_id_floor = 0;
    std::mutex dict_mutex;   // guards dictionaries
    std::vector<std::shared_ptr<const StringDictionary>> dictionaries;  // by column slot
    // The committed state each dictionary holds: its entries are exactly the
    // file's first `bytes` bytes while its size is `entries`.
    std::vector<catalog::DictionaryState> loaded;
    // TRUNCATE starts a new dictionary epoch at this snapshot version; readers
    // of older snapshots keep the previous epoch's dictionaries.
    uint64_t epoch_version = 0;
    std::vector<std::shared_ptr<const StringDictionary>> previous_epoch;
  };
  // Files that a committed change made unreachable (merged tail chunks,
  // TRUNCATE, DROP) but that readers of an older snapshot may still read:
  // deleted once no one else holds that snapshot, by a thread of the store's
  // own, so that no statement (a DROP TABLE of a large table, the read after
  // it) waits for the filesystem to free them. A crash before then leaves
  // orphans for recover(); ids and oids are never reused, so a file still
  // waiting to be deleted never names a live one.
  struct Retired {
    std::shared_ptr<const catalog::TableSnapshot> snapshot;
    std::vector<std::string> files;
    std::string directory;  // removed entirely (DROP); empty otherwise
    std::vector<catalog::ChunkBytesKey> chunk_bytes;  // of inlined chunks, handed to Catalog::forget_chunk_bytes
  };
  void retire(Retired retired);
  // Hands the retired entries no reader holds any more to the remover thread
  // (cheap when there are none: every chunk read calls it, since snapshots
  // are let go at any statement's end).
  void queue_retired();
  // Takes the retired entries no reader holds (all: force) off the list.
  std::vector<Retired> take_retired(bool force);
  void remove_files(const Retired& r);
  void run_remover();

 public:
  // An append's chunk, as it wrote it (every column of committed's
  // definition, in order, without dictionaries), made a cached read of the
  // committed chunk: the statement that reads a table right after writing
  // it (CREATE TABLE AS and its check query) finds it decoded, without
  // reading and checking its files again.
  void cache_written(const catalog::TableSnapshot& committed, uint64_t chunk_id, std::shared_ptr<ChunkBatch> batch);
  // Bytes of chunks one append may keep for cache_written: a large COPY
  // must not push the cache's other tables out, nor hold its chunks in memory.
  uint64_t written_cache_budget() const { return options_.cache_bytes / 8; }

  // Deletes retired files whose snapshot no reader holds any more (force:
  // all) on the calling thread, and waits for the remover's queue to empty:
  // when it returns, they are gone. The remover does the same by itself
  // after commits and reads; public for tests.
  void collect_retired(bool force = false);

 private:
  std::shared_ptr<TableState> state(uint32_t oid);
  // dicts and states: one per column of def (null: unchanged).
  void publish_dictionaries(const catalog::TableDef& def, const std::vector<std::shared_ptr<const StringDictionary>>& dicts,
                            const std::vector<catalog::DictionaryState>& states);
  void remove_chunk_files(const catalog::TableDef& def, uint64_t chunk_id);
  // The cache key of a chunk with every column of def (cache_written's).
  static std::string whole_chunk_key(const catalog::TableDef& def, uint64_t chunk_id);
  // Columns (indexes into snapshot.def.columns) of a chunk cache_written
  // holds whole; nullptr when it holds none.
  std::shared_ptr<const ChunkBatch> project_written(const catalog::TableSnapshot& snapshot, uint64_t chunk_id,
                                                    const std::vector<int>& columns);
  // ADD and DROP COLUMN: the chunk statistics and dictionary states of
  // `after`'s columns, and the new columns' missing values made storable.
  catalog::Catalog::ColumnLayout relayout(const catalog::TableSnapshot& current, catalog::TableDef& after);
  // After a committed DROP: forgets the table's cached chunks and state and
  // retires its directory (read by holders of `before` until they finish).
  void forget_table(uint32_t oid, std::shared_ptr<const catalog::TableSnapshot> before);
  // After a commit that removed committed chunks from the list: retires their files.
  void retire_chunks(std::shared_ptr<const catalog::TableSnapshot> before, const std::vector<uint64_t>& chunk_ids);
  // After a rolled-back block: cuts the dictionary files back to the
  // committed lengths and drops in-memory dictionaries holding its entries
  // (an append must not find a rolled-back value's code).
  void reset_dictionaries(const catalog::TableSnapshot& committed);

  catalog::Catalog& catalog_;
  StoreOptions options_;
  AppendCheckFactory append_check_;
  ChunkCache cache_;
  TableLocks locks_;
  std::mutex retired_mutex_;
  std::vector<Retired> retired_;
  std::atomic<size_t> retired_count_{0};  // retired_.size(), read without the lock
  std::mutex remover_mutex_;
  std::condition_variable remover_wake_, remover_idle_;
  std::deque<Retired> removing_;  // handed to the remover, not yet deleted
  bool remover_busy_ = false;
  bool remover_stop_ = false;
  std::thread remover_;  // last: started once the members it uses exist
  std::mutex states_mutex_;
  std::unordered_map<uint32_t, std::shared_ptr<TableState>> states_;
};

}  // namespace tally::storage
