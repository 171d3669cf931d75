#include "storage/table_appender.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/error.hpp"
#include "storage/chunk_file.hpp"
#include "storage/column_layout.hpp"
#include "storage/column_stats.hpp"
#include "storage/dictionary_file.hpp"
#include "storage/file_io.hpp"
#include "storage/write_transaction.hpp"

namespace tally::storage {

TableAppender::TableAppender(TableStore& store, uint32_t oid, WriteTransaction* transaction,
                             const CancelToken* cancel)
    : store_(store),
      state_(store.state(oid)),
      transaction_(transaction),
      write_lock_(transaction ? nullptr : &store.locks_, oid, cancel) {
  // Read the snapshot under the write lock: no other append can change it now.
  snapshot_ = transaction_ ? transaction_->touch(oid).working : store_.catalog().find_table(oid);
  if (!snapshot_) throw Error(SqlState::undefined_table, "relation with OID " + std::to_string(oid) + " does not exist");
  next_chunk_id_ = std::max(snapshot_->next_chunk_id, state_->chunk_id_floor);
  for (const auto& c : snapshot_->chunks) next_chunk_id_ = std::max(next_chunk_id_, c.chunk_id + 1);
  const size_t ncols = snapshot_->def.columns.size();
  builders_.resize(ncols);
  dicts_.resize(ncols);
  for (size_t c = 0; c < ncols; ++c) {
    const SqlType type = snapshot_->def.columns[c].type;
    builders_[c].column.type = type;
    builders_[c].width = static_cast<size_t>(storage_width(type));
    builders_[c].text = is_string_stored(type.id);
    if (builders_[c].text) {
      const auto committed = store_.dictionary(*snapshot_, static_cast<int>(c));
      dicts_[c] = committed ? std::make_shared<StringDictionary>(*committed) : std::make_shared<StringDictionary>();
    }
  }
  start_chunk();
  merge_tail();
  make_check(false);
}

void TableAppender::make_check(bool replacing) {
  check_.reset();
  checked_ = rows_;  // a merged tail's rows are committed rows, not new ones
  if (store_.append_check() && !snapshot_->def.keys.empty())
    check_ = store_.append_check()(store_, snapshot_, replacing, transaction_ != nullptr);
}

void TableAppender::check_rows() {
  if (!check_ || checked_ >= rows_) return;
  std::vector<const ColumnVector*> columns;
  std::vector<const StringDictionary*> dictionaries;
  for (size_t c = 0; c < builders_.size(); ++c) {
    columns.push_back(&builders_[c].column);
    dictionaries.push_back(dicts_[c].get());
  }
  // A row whose check throws is not counted, so a caller that catches the
  // error (group commit) abandons the whole append, as it does.
  check_->check(columns, dictionaries, checked_, rows_ - checked_);
  checked_ = rows_;
}

TableAppender::~TableAppender() {
  for (auto& w : writes_) {
    try {
      w.get();
    } catch (...) {
    }
  }
  if (committed_) return;
  // Roll back: the catalog never saw these chunks; their files are orphans.
  for (const uint64_t id : started_) store_.remove_chunk_files(snapshot_->def, id);
}

void TableAppender::wait_writes(size_t keep_last) {
  while (writes_.size() > keep_last) {
    auto f = std::move(writes_.front());
    writes_.pop_front();
    written_.push_back(f.get());
    wrote_files_ = wrote_files_ || !written_.back().inlined;
  }
}

void TableAppender::start_chunk() {
  rows_ = 0;
  checked_ = 0;
  capacity_ = 0;
  for (auto& b : builders_) {
    b.column.rows = 0;
    b.column.data.clear();
    b.column.validity.clear();
  }
}

void TableAppender::reserve_rows(size_t rows) {
  if (rows <= capacity_) return;
  // Doubling from a small start: a row-at-a-time INSERT of a chunk's rows
  // copies each row about twice, and a one-row statement touches kilobytes.
  constexpr size_t first_rows = 1024;
  const size_t grown = std::min(chunk_rows(), std::max({rows, 2 * capacity_, first_rows}));
  for (auto& b : builders_) {
    b.column.data.resize(grown * b.width);
    if (!b.column.validity.empty()) b.column.validity.resize(grown, 1);
  }
  capacity_ = grown;
}

void TableAppender::take_prepared_chunk() {
  const size_t cap = chunk_rows();
  if (prepared_.valid()) {
    std::vector<std::vector<uint8_t>> buffers = prepared_.get();
    for (size_t c = 0; c < builders_.size(); ++c) builders_[c].column.data = std::move(buffers[c]);
    capacity_ = cap;
  }
  // The buffers of the chunk after this one: their pages are faulted in and
  // cleared there (the kernel's work of a fresh chunk, as long as the copy
  // into it), not on the thread that appends every row.
  std::vector<size_t> bytes;
  for (const auto& b : builders_) bytes.push_back(cap * b.width);
  prepared_ = std::async(std::launch::async, [bytes = std::move(bytes)] {
    std::vector<std::vector<uint8_t>> buffers;
    for (const size_t n : bytes) buffers.emplace_back(n);
    return buffers;
  });
}

void TableAppender::merge_tail() {
  if (snapshot_->chunks.empty()) return;
  const catalog::ChunkInfo& tail = snapshot_->chunks.back();
  if (tail.rows >= store_.options().merge_tail_below_rows || tail.rows >= store_.options().chunk_rows) return;
  std::vector<int> all(builders_.size());
  for (size_t c = 0; c < all.size(); ++c) all[c] = static_cast<int>(c);
  const auto batch = store_.read_chunk(*snapshot_, snapshot_->chunks.size() - 1, all);
  reserve_rows(tail.rows);
  for (size_t c = 0; c < builders_.size(); ++c) {
    const ColumnVector& src = batch->columns[c];
    Builder& b = builders_[c];
    std::memcpy(b.column.data.data(), src.data.data(), src.data.size());
    if (src.has_nulls()) {
      b.column.validity.assign(capacity_, 1);
      std::memcpy(b.column.validity.data(), src.validity.data(), src.rows);
    }
  }
  rows_ = tail.rows;
  replaced_.push_back(tail.chunk_id);
}

void TableAppender::replace_all_chunks() {
  // Drops the merged tail's rows from the buffers along with the rest.
  replaced_.clear();
  for (const auto& c : snapshot_->chunks) replaced_.push_back(c.chunk_id);
  appended_ = 0;
  start_chunk();
  make_check(true);
}

const StringDictionary& TableAppender::working_dictionary(int column) {
  StringDictionary& d = *dicts_[static_cast<size_t>(column)];
  d.make_newest();
  return d;
}

bool TableAppender::adopt_dictionary(int column, std::shared_ptr<const StringDictionary> source) {
  auto& dictionary = dicts_[static_cast<size_t>(column)];
  if (dictionary->size() != 0) return false;
  dictionary = std::make_shared<StringDictionary>(StringDictionary::borrow(*source));
  adopted_.resize(dicts_.size());
  adopted_[static_cast<size_t>(column)] = std::move(source);
  return true;
}

void TableAppender::set_text(int column, std::string_view value) {
  const int32_t code = dicts_[static_cast<size_t>(column)]->intern(value);
  std::memcpy(value_slot(column), &code, sizeof code);
}

void TableAppender::append_rows(size_t rows, const std::vector<const uint8_t*>& data,
                                const std::vector<const uint8_t*>& valid) {
  const size_t cap = store_.options().chunk_rows;
  for (size_t done = 0; done < rows;) {
    const size_t n = std::min(rows - done, cap - rows_);
    // An append that has filled a chunk is a bulk load: its next chunks take
    // their whole size at once instead of regrowing (a copy of the rows each
    // time), made ready on another thread.
    if (appended_ >= cap && capacity_ == 0) take_prepared_chunk();
    reserve_rows(rows_ + n);
    for (size_t c = 0; c < builders_.size(); ++c) {
      Builder& b = builders_[c];
      std::memcpy(b.column.data.data() + rows_ * b.width, data[c] + done * b.width, n * b.width);
      const uint8_t* v = valid[c];
      if (v == nullptr) {
        if (!b.column.validity.empty()) std::memset(b.column.validity.data() + rows_, 1, n);
        continue;
      }
      if (b.column.validity.empty()) {
        if (std::memchr(v + done, 0, n) == nullptr) continue;
        b.column.validity.assign(capacity_, 1);
      }
      std::memcpy(b.column.validity.data() + rows_, v + done, n);
    }
    rows_ += n;
    appended_ += n;
    done += n;
    check_rows();
    if (rows_ == cap) {
      flush_chunk();
      start_chunk();
    }
  }
}

void TableAppender::append_columns(size_t rows, std::vector<std::vector<uint8_t>>& data,
                                   std::vector<std::vector<uint8_t>>& valid) {
  const size_t cap = chunk_rows();
  if (rows == 0) return;
  if (rows_ != 0 || rows > cap) {
    std::vector<const uint8_t*> data_at(builders_.size()), valid_at(builders_.size());
    for (size_t c = 0; c < builders_.size(); ++c) {
      data_at[c] = data[c].data();
      valid_at[c] = valid[c].empty() ? nullptr : valid[c].data();
    }
    append_rows(rows, data_at, valid_at);
    return;
  }
  // Swapped, not moved: the caller gets the (empty) buffers start_chunk left.
  // A part chunk grows (reserve_rows) when a later append adds rows.
  for (size_t c = 0; c < builders_.size(); ++c) {
    ColumnVector& column = builders_[c].column;
    column.data.swap(data[c]);
    column.data.resize(rows * builders_[c].width);
    column.validity.clear();
    if (!valid[c].empty() && std::memchr(valid[c].data(), 0, rows) != nullptr) {
      column.validity.swap(valid[c]);
      column.validity.resize(rows, 1);
    }
  }
  capacity_ = rows;
  rows_ = rows;
  appended_ += rows;
  check_rows();
  if (rows_ == cap) {
    flush_chunk();
    start_chunk();
  }
}

void TableAppender::set_null(int column) {
  if (rows_ >= capacity_) reserve_rows(rows_ + 1);
  Builder& b = builders_[static_cast<size_t>(column)];
  if (b.column.validity.empty()) b.column.validity.assign(capacity_, 1);
  b.column.validity[rows_] = 0;
  std::memset(b.column.data.data() + rows_ * b.width, 0, b.width);
}

void TableAppender::finish_row() {
  ++rows_;
  ++appended_;
  check_rows();
  if (rows_ == store_.options().chunk_rows) {
    flush_chunk();
    start_chunk();
  }
}

void TableAppender::flush_chunk() {
  if (rows_ == 0) return;
  // Bound memory: at most chunks_in_flight_ chunks in flight besides the one being filled.
  wait_writes(chunks_in_flight_ - 1);
  const uint64_t chunk_id = next_chunk_id_++;
  state_->chunk_id_floor = next_chunk_id_;
  started_.push_back(chunk_id);
  auto columns = std::make_shared<std::vector<ColumnVector>>();
  std::vector<std::string> paths;
  std::vector<int> slots;
  for (size_t c = 0; c < builders_.size(); ++c) {
    slots.push_back(snapshot_->def.slot(c));
    ColumnVector& col = builders_[c].column;
    col.rows = rows_;
    col.data.resize(rows_ * builders_[c].width);
    if (!col.validity.empty()) col.validity.resize(rows_);
    columns->push_back(std::move(col));
    builders_[c].column = ColumnVector{};
    builders_[c].column.type = columns->back().type;
    capacity_ = 0;
    paths.push_back(store_.chunk_path(snapshot_->def.oid, chunk_id, slots.back()));
  }
  const uint64_t rows = rows_;
  // A part chunk (the end of an append) whose stored bytes come to at most
  // inline_chunk_bytes is kept in the catalog, committed with the chunk list:
  // no file to create and sync, nor a directory. Encoded in memory first
  // where its native bytes are not far beyond that (encoding shrinks them).
  uint64_t native_bytes = 0;
  for (const auto& col : *columns) native_bytes += col.data.size() + col.validity.size();
  const uint64_t inline_limit = store_.options().inline_chunk_bytes;
  const bool inline_candidate = rows < store_.options().chunk_rows && native_bytes <= 8 * inline_limit;
  if (keeping_) {
    kept_bytes_ += native_bytes;
    keeping_ = kept_bytes_ <= store_.written_cache_budget();
    if (keeping_) kept_.emplace_back(chunk_id, columns);
    else kept_.clear();
  }
  // A block's small chunks are fsynced once, at COMMIT (WriteTransaction::commit):
  // many small INSERTs in a block then cost one round of fsyncs, not one each.
  // Full chunks (a large COPY) are synced here, overlapping the parsing.
  const bool sync = transaction_ == nullptr || rows_ == store_.options().chunk_rows;
  // A small unsynced chunk (a statement in a block, a small CREATE TABLE AS)
  // costs less than a thread: written by whoever waits for it, its columns
  // one after the other.
  constexpr uint64_t threaded_chunk_rows = 1 << 14;
  const bool threaded = sync || rows >= threaded_chunk_rows;
  writes_.push_back(std::async(threaded ? std::launch::async : std::launch::deferred,
                               [columns, paths = std::move(paths), slots = std::move(slots), chunk_id, rows, sync,
                                threaded, inline_candidate, inline_limit] {
    catalog::ChunkInfo info;
    info.chunk_id = chunk_id;
    info.rows = rows;
    info.stats.resize(columns->size());
    if (inline_candidate) {
      auto bytes = std::make_shared<catalog::ChunkInfo::StoredColumns>();
      uint64_t stored = 0;
      for (size_t c = 0; c < columns->size(); ++c) {
        bytes->emplace_back(slots[c], encode_chunk_bytes((*columns)[c]));
        stored += bytes->back().second.size();
        info.stats[c] = compute_column_stats((*columns)[c], 1);
      }
      info.inlined = stored <= inline_limit;
      if (info.inlined) {
        info.stored = std::move(bytes);
        return info;
      }
      // Too large for the catalog: the encoded bytes become the files, synced side by side.
      for (size_t c = 0; c < paths.size(); ++c) write_chunk_bytes(paths[c], (*bytes)[c].second, /*sync=*/false);
      if (sync) sync_all(paths, {});
      return info;
    }
    // Each column is written (and, for a full chunk, fsynced) on a thread of
    // its own, and summarized beside it on the cores left: checksums and
    // sketches of a wide chunk, and the fsync latency of small appends, would
    // otherwise add up column by column and fall behind a parallel COPY, and
    // a CREATE TABLE AS of a few columns would keep most cores idle.
    const size_t ncols = paths.size();
    auto write_task = [&](size_t c) {
      write_chunk_file(paths[c], (*columns)[c], /*sync=*/false);
      if (sync) sync_file(paths[c]);
    };
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const auto stats_threads = static_cast<unsigned>(std::max<size_t>(1, cores / std::max<size_t>(ncols, 1)));
    auto stats_task = [&](size_t c) { info.stats[c] = compute_column_stats((*columns)[c], stats_threads); };
    std::vector<std::future<void>> tasks;
    for (size_t c = 0; c < ncols; ++c) {
      if (!threaded) {
        write_task(c);
        stats_task(c);
        continue;
      }
      tasks.push_back(std::async(std::launch::async, write_task, c));
      if (c + 1 < ncols) tasks.push_back(std::async(std::launch::async, stats_task, c));
      else stats_task(c);
    }
    for (auto& f : tasks) f.get();
    return info;
  }));
}

std::vector<std::pair<uint64_t, std::shared_ptr<ChunkBatch>>> TableAppender::take_kept() {
  std::vector<std::pair<uint64_t, std::shared_ptr<ChunkBatch>>> out;
  for (auto& [chunk_id, columns] : kept_) {
    auto batch = std::make_shared<ChunkBatch>();
    batch->rows = columns->empty() ? 0 : columns->front().rows;
    batch->columns = std::move(*columns);  // the chunk's write has finished (wait_writes)
    out.emplace_back(chunk_id, std::move(batch));
  }
  kept_.clear();
  return out;
}

// A column whose dictionary is all of another table's committed entries
// (adopt_dictionary, nothing added) gets that table's file by a link: a
// CREATE TABLE AS of a million text keys wrote and fsynced 17 MB otherwise.
std::optional<catalog::DictionaryState> TableAppender::link_adopted_dictionary(size_t column,
                                                                               const catalog::DictionaryState& committed,
                                                                               const std::string& path) {
  if (committed.entries != 0 || committed.bytes != 0 || column >= adopted_.size() || !adopted_[column] ||
      dicts_[column]->size() != adopted_[column]->size())
    return std::nullopt;
  return store_.link_committed_dictionary(*adopted_[column], path);
}

std::shared_ptr<const catalog::TableSnapshot> TableAppender::commit() {
  flush_chunk();
  rows_ = 0;
  // Dictionary appends overlap the chunk files' background fsyncs.
  const uint32_t oid = snapshot_->def.oid;
  std::vector<catalog::DictionaryState> dict_states = snapshot_->dictionaries;
  dict_states.resize(builders_.size());
  for (size_t c = 0; c < builders_.size(); ++c) {
    if (!dicts_[c] || static_cast<uint64_t>(dicts_[c]->size()) == dict_states[c].entries) continue;
    const std::string path = store_.dictionary_path(oid, snapshot_->def.slot(c));
    wrote_files_ = true;
    if (auto linked = link_adopted_dictionary(c, dict_states[c], path)) {
      dict_states[c] = *linked;
      continue;
    }
    dict_states[c] = append_dictionary(path, dict_states[c], *dicts_[c], /*sync=*/transaction_ == nullptr);
  }
  wait_writes(0);
  if (transaction_) {
    auto working = std::make_shared<catalog::TableSnapshot>(*snapshot_);
    for (const uint64_t id : replaced_)
      std::erase_if(working->chunks, [id](const catalog::ChunkInfo& c) { return c.chunk_id == id; });
    working->chunks.insert(working->chunks.end(), written_.begin(), written_.end());
    working->dictionaries = dict_states;
    working->next_chunk_id = std::max(working->next_chunk_id, next_chunk_id_);
    transaction_->record_append(oid, working, started_,
                                std::vector<std::shared_ptr<const StringDictionary>>(dicts_.begin(), dicts_.end()),
                                take_kept());
    committed_ = true;
    return working;
  }
  if (wrote_files_) sync_directory(store_.table_dir(oid));
  auto snap = store_.catalog().commit_append(oid, written_, replaced_, dict_states, next_chunk_id_);
  committed_ = true;
  std::vector<std::shared_ptr<const StringDictionary>> published(dicts_.begin(), dicts_.end());
  store_.publish_dictionaries(snapshot_->def, published, dict_states);
  store_.retire_chunks(snapshot_, replaced_);
  for (auto& [chunk_id, batch] : take_kept()) store_.cache_written(*snap, chunk_id, std::move(batch));
  if (check_) check_->committed(*snap);
  return snap;
}

}  // namespace tally::storage
