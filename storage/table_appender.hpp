#pragma once
// One append (an INSERT or a COPY) to one table. Rows are built column by
// column into chunk-sized buffers; a full chunk is written and fsynced at
// once, and commit() writes the rest, the new dictionary entries, and then
// commits the chunk list in one catalog transaction. Destroyed without
// commit() (an error), it removes the files it wrote and the table is as
// before. Holds the table's write lock for its whole life. In a transaction
// block (WriteTransaction), the block holds the lock and commit() records the
// new chunk list with the block instead of committing it.
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/table_snapshot.hpp"
#include "storage/column_vector.hpp"
#include "storage/table_store.hpp"

namespace tally::storage {

class WriteTransaction;

class TableAppender {
 public:
  TableAppender(TableStore& store, uint32_t oid, WriteTransaction* transaction = nullptr,
                const CancelToken* cancel = nullptr);
  ~TableAppender();
  TableAppender(const TableAppender&) = delete;
  TableAppender& operator=(const TableAppender&) = delete;

  const catalog::TableDef& table() const { return snapshot_->def; }

  // Row building: set every column of the current row exactly once, then
  // finish_row(). Fixed-width columns: write the native value to
  // value_slot(column). Text columns: set_text with the final value (length
  // rules already applied). NULL: set_null.
  void* value_slot(int column) {
    if (rows_ >= capacity_) reserve_rows(rows_ + 1);
    Builder& b = builders_[static_cast<size_t>(column)];
    return b.column.data.data() + rows_ * b.width;
  }
  void set_text(int column, std::string_view value);
  // This append's dictionary of a text column, made the newest of its store:
  // other threads may call its find_newest() while this append interns.
  const StringDictionary& working_dictionary(int column);
  // Interns value (hash h) into a text column's dictionary; returns its code.
  int32_t intern(int column, std::string_view value, uint64_t h) {
    return dicts_[static_cast<size_t>(column)]->intern(value, h);
  }
  // Gives a text column whose dictionary is still empty a copy of source's
  // entries under the same codes (StringDictionary::borrow: shared until it adds one), so values
  // coded in source are appended as they are. False, nothing changed, when
  // the column's dictionary has entries.
  // The source is kept: at the commit, a column that took all of a table's
  // committed entries and added none links that table's file.
  bool adopt_dictionary(int column, std::shared_ptr<const StringDictionary> source);
  // Bulk rows: append `rows` rows whose column c values are the native
  // values at data[c] (rows * width bytes; text: int32 codes) and whose
  // validity is valid[c] (1 = non-NULL; nullptr: no NULLs). Every column
  // must be given. Writes chunks as they fill.
  void append_rows(size_t rows, const std::vector<const uint8_t*>& data, const std::vector<const uint8_t*>& valid);
  // Bulk rows as whole buffers, as append_rows: data[c] holds rows * width
  // bytes, valid[c] rows bytes or nothing (no NULL). Rows that start a
  // chunk are taken as they are, without a copy (a large CREATE TABLE AS
  // builds its chunks on several threads; give data a capacity of a chunk
  // when rows are fewer, or the buffer grows); data and valid then hold
  // other buffers, to be dropped or reused.
  void append_columns(size_t rows, std::vector<std::vector<uint8_t>>& data, std::vector<std::vector<uint8_t>>& valid);
  // Rows per chunk: where append_columns takes buffers without a copy.
  size_t chunk_rows() const { return store_.options().chunk_rows; }
  // Lets up to n full chunks be written (encoded, summarized, synced) at
  // once; 2 unless set. A bulk append whose chunks are built in memory
  // ahead of it (CREATE TABLE AS stages a wave of chunks, one per thread)
  // raises it to its wave, as memory allows: two at a time left most of a
  // 16-core host idle while a result of 1e8 rows was written.
  void set_chunks_in_flight(size_t n) { chunks_in_flight_ = n < 1 ? 1 : n; }
  void set_null(int column);
  // Ends the current row; writes a chunk when it is full.
  void finish_row();
  // Makes this append a rewrite: its commit replaces every chunk of the
  // table as the appender read it (UPDATE, DELETE). Call before adding rows.
  void replace_all_chunks();
  // Rows appended by this append (excluding merged tail rows).
  uint64_t rows_appended() const { return appended_; }

  // Makes the append durable and visible (in a block: durable, and visible
  // to the block). Returns the new snapshot.
  std::shared_ptr<const catalog::TableSnapshot> commit();

 private:
  struct Builder {
    ColumnVector column;
    size_t width = 0;
    bool text = false;
  };
  // Starts an empty chunk; its buffers are made when the first rows are
  // set (append_columns brings its own).
  void start_chunk();
  // Makes the current chunk's buffers hold at least `rows` rows (at most a
  // chunk), growing them geometrically: a statement that writes a few rows
  // must not allocate and clear a whole chunk's buffers per column.
  void reserve_rows(size_t rows);
  void flush_chunk();
  // At the start of a bulk append's chunk: takes the buffers prepared for it
  // (if any) and starts preparing the next chunk's.
  void take_prepared_chunk();
  // Waits for background chunk writes; with keep_last, until at most that many remain.
  void wait_writes(size_t keep_last);
  void merge_tail();
  // Runs the append check (if any) over rows [checked_, rows_) of the buffers.
  void check_rows();
  void make_check(bool replacing);

  TableStore& store_;
  std::shared_ptr<TableStore::TableState> state_;
  WriteTransaction* transaction_;
  TableLockGuard write_lock_;
  std::shared_ptr<const catalog::TableSnapshot> snapshot_;
  std::vector<Builder> builders_;
  size_t rows_ = 0;         // rows in the current chunk buffers
  size_t capacity_ = 0;     // rows the current chunk's buffers hold (validity too, where present)
  uint64_t appended_ = 0;
  uint64_t next_chunk_id_ = 0;
  std::vector<catalog::ChunkInfo> written_;   // chunks written, not committed
  bool wrote_files_ = false;                  // a chunk or dictionary file was written or linked
  std::vector<uint64_t> started_;             // chunk ids whose files may exist
  // Full chunks are written, fsynced and summarized by a background task
  // while parsing continues (fsync latency dominates otherwise).
  std::deque<std::future<catalog::ChunkInfo>> writes_;
  size_t chunks_in_flight_ = 2;
  // A bulk append's next chunk buffers, allocated and cleared by a task.
  std::future<std::vector<std::vector<uint8_t>>> prepared_;
  std::vector<uint64_t> replaced_;            // committed chunks merged into ours
  // The chunks written, kept decoded for TableStore::cache_written at the
  // commit while they fit its budget (a larger append keeps none).
  std::vector<std::pair<uint64_t, std::shared_ptr<std::vector<ColumnVector>>>> kept_;
  uint64_t kept_bytes_ = 0;
  bool keeping_ = true;
  // kept_ as chunk batches, the chunks' own columns moved into them.
  std::vector<std::pair<uint64_t, std::shared_ptr<ChunkBatch>>> take_kept();
  std::optional<catalog::DictionaryState> link_adopted_dictionary(size_t column, const catalog::DictionaryState& committed,
                                                                  const std::string& path);
  // Per text column: this append's dictionary, an O(1) copy of the committed
  // one that shares its store (string_dictionary.hpp).
  std::vector<std::shared_ptr<StringDictionary>> dicts_;
  std::vector<std::shared_ptr<const StringDictionary>> adopted_;  // by column: adopt_dictionary's source
  bool committed_ = false;
  std::unique_ptr<AppendCheck> check_;
  size_t checked_ = 0;  // rows of the current buffers the check has seen (merged tail rows count as seen)
};

}  // namespace tally::storage
