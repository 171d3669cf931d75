#include "storage/table_store.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "common/error.hpp"
#include "common/log.hpp"
#include "storage/chunk_file.hpp"
#include "storage/column_layout.hpp"
#include "storage/column_stats.hpp"
#include "storage/dictionary_file.hpp"
#include "storage/file_io.hpp"
#include "storage/table_appender.hpp"

namespace fs = std::filesystem;

namespace tally::storage {

TableStore::TableStore(catalog::Catalog& catalog, StoreOptions options)
    : catalog_(catalog), options_(options), cache_(options.cache_bytes) {
  if (options_.chunk_rows == 0) options_.chunk_rows = 1;
  std::error_code ec;
  fs::create_directories(catalog_.data_dir() + "/tables", ec);
  if (ec) throw Error(SqlState::io_error, "could not create directory \"" + catalog_.data_dir() + "/tables\": " + ec.message());
  remover_ = std::thread([this] { run_remover(); });
}

TableStore::~TableStore() {
  {
    std::lock_guard lock(remover_mutex_);
    remover_stop_ = true;
  }
  remover_wake_.notify_all();
  remover_.join();
  for (const auto& r : removing_) remove_files(r);
  for (const auto& r : take_retired(/*force=*/true)) remove_files(r);
}

void TableStore::retire(Retired retired) {
  {
    std::lock_guard lock(retired_mutex_);
    retired_.push_back(std::move(retired));
    retired_count_.store(retired_.size(), std::memory_order_relaxed);
  }
  queue_retired();
}

std::vector<TableStore::Retired> TableStore::take_retired(bool force) {
  std::vector<Retired> ready;
  if (retired_count_.load(std::memory_order_relaxed) == 0) return ready;
  std::lock_guard lock(retired_mutex_);
  for (auto it = retired_.begin(); it != retired_.end();) {
    // use_count 1: only this list still holds the snapshot.
    if (force || it->snapshot.use_count() == 1) {
      ready.push_back(std::move(*it));
      it = retired_.erase(it);
    } else {
      ++it;
    }
  }
  retired_count_.store(retired_.size(), std::memory_order_relaxed);
  return ready;
}

void TableStore::remove_files(const Retired& r) {
  std::error_code ec;
  for (const auto& f : r.files) fs::remove(f, ec);
  if (!r.directory.empty()) fs::remove_all(r.directory, ec);
  if (!r.chunk_bytes.empty()) catalog_.forget_chunk_bytes(r.chunk_bytes);
}

void TableStore::queue_retired() {
  auto ready = take_retired(/*force=*/false);
  if (ready.empty()) return;
  {
    std::lock_guard lock(remover_mutex_);
    for (auto& r : ready) removing_.push_back(std::move(r));
  }
  remover_wake_.notify_one();
}

void TableStore::run_remover() {
  std::unique_lock lock(remover_mutex_);
  for (;;) {
    remover_wake_.wait(lock, [this] { return remover_stop_ || !removing_.empty(); });
    if (remover_stop_) return;  // the destructor deletes what is left
    Retired r = std::move(removing_.front());
    removing_.pop_front();
    remover_busy_ = true;
    lock.unlock();
    remove_files(r);
    r = Retired{};  // the snapshot too, off the lock
    lock.lock();
    remover_busy_ = false;
    if (removing_.empty()) remover_idle_.notify_all();
  }
}

void TableStore::collect_retired(bool force) {
  for (const auto& r : take_retired(force)) remove_files(r);
  std::unique_lock lock(remover_mutex_);
  remover_idle_.wait(lock, [this] { return removing_.empty() && !remover_busy_; });
}

std::string TableStore::table_dir(uint32_t oid) const { return catalog_.data_dir() + "/tables/" + std::to_string(oid); }

std::string TableStore::chunk_path(uint32_t oid, uint64_t chunk_id, int slot) const {
  return table_dir(oid) + "/" + std::to_string(chunk_id) + "." + std::to_string(slot) + ".col";
}

std::string TableStore::dictionary_path(uint32_t oid, int slot) const {
  return table_dir(oid) + "/" + std::to_string(slot) + ".dict";
}

namespace {

// Whether chunk has a file for column `column` of def (ADD COLUMN leaves older chunks without one).
bool has_file(const catalog::TableDef& def, size_t column, uint64_t chunk_id) {
  return chunk_id >= def.columns[column].first_chunk;
}

// A column of an inlined chunk: from the chunk's own bytes while it is a
// block's, uncommitted, else from the catalog.
ColumnVector read_inlined(catalog::Catalog& catalog, const catalog::TableDef& def, const catalog::ChunkInfo& chunk,
                          size_t column, SqlType type, const std::string& what) {
  const int slot = def.slot(column);
  if (chunk.stored) {
    for (const auto& [stored_slot, bytes] : *chunk.stored)
      if (stored_slot == slot) return read_chunk_bytes(bytes, type, chunk.rows, what);
  }
  const auto bytes = catalog.chunk_bytes(def.oid, chunk.chunk_id, slot);
  if (!bytes) throw Error(SqlState::data_corrupted, "could not read " + what + ": its bytes are missing from the catalog");
  return read_chunk_bytes(*bytes, type, chunk.rows, what);
}

// The stored bytes of a snapshot's inlined chunks among ids (all: every chunk).
std::vector<catalog::ChunkBytesKey> inlined_bytes(const catalog::TableSnapshot& snapshot, const std::vector<uint64_t>* ids,
                                                  std::optional<int> slot = std::nullopt) {
  std::vector<catalog::ChunkBytesKey> keys;
  for (const auto& chunk : snapshot.chunks) {
    if (!chunk.inlined) continue;
    if (ids && std::find(ids->begin(), ids->end(), chunk.chunk_id) == ids->end()) continue;
    keys.push_back({snapshot.def.oid, chunk.chunk_id, slot});
  }
  return keys;
}

// A column of a chunk written before ADD COLUMN: every row its missing value.
ColumnVector missing_column(const catalog::ColumnDef& def, size_t rows) {
  ColumnVector v;
  v.type = def.type;
  v.rows = rows;
  const auto width = static_cast<size_t>(storage_width(def.type));
  v.data.resize(rows * width);
  if (!def.missing || def.missing->size() != width) {
    v.validity.assign(rows, 0);
    return v;
  }
  for (size_t i = 0; i < rows; ++i) std::memcpy(v.data.data() + i * width, def.missing->data(), width);
  return v;
}

}  // namespace

std::shared_ptr<TableStore::TableState> TableStore::state(uint32_t oid) {
  std::lock_guard lock(states_mutex_);
  auto& s = states_[oid];
  if (!s) s = std::make_shared<TableState>();
  return s;
}

bool TableStore::files_whole(const catalog::TableSnapshot& snapshot) const {
  const catalog::TableDef& def = snapshot.def;
  try {
    for (const catalog::ChunkInfo& chunk : snapshot.chunks) {
      if (chunk.inlined) continue;  // committed with the catalog itself
      for (size_t c = 0; c < def.columns.size(); ++c) {
        if (!has_file(def, c, chunk.chunk_id)) continue;
        (void)read_chunk_file(chunk_path(def.oid, chunk.chunk_id, def.slot(c)), def.columns[c].type, chunk.rows,
                              "chunk " + std::to_string(chunk.chunk_id) + " of table \"" + def.name + "\"");
      }
    }
    for (size_t c = 0; c < def.columns.size() && c < snapshot.dictionaries.size(); ++c) {
      if (snapshot.dictionaries[c].bytes == 0) continue;
      (void)load_dictionary(dictionary_path(def.oid, def.slot(c)), snapshot.dictionaries[c],
                            "dictionary of table \"" + def.name + "\"");
    }
  } catch (const Error&) {
    return false;
  }
  return true;
}

size_t TableStore::recover() {
  size_t removed = 0;
  // Tables a one-round commit created (storage/write_transaction.hpp) whose
  // files a crash may have caught before their sync ended: kept where every
  // file reads back whole, else removed, as their commit never finished
  // (the client had no reply). Their directories go with the orphans below.
  for (const uint32_t oid : catalog_.unsynced_tables()) {
    const auto snap = catalog_.find_table(oid);
    if (!snap) continue;
    if (files_whole(*snap)) {
      catalog_.mark_synced(oid);
      continue;
    }
    log::warning("unsynced_table_removed", {{"table", snap->def.name}, {"oid", static_cast<int64_t>(oid)}});
    catalog_.drop_table(oid);
    ++removed;
  }
  // Rows, not files: not counted among the removed.
  (void)catalog_.delete_unreachable_chunk_bytes();
  const std::string root = catalog_.data_dir() + "/tables";
  std::error_code ec;
  // A table whose chunks are all inlined committed without syncing the
  // directory create_table made: a crash may have lost it.
  for (const auto& table : catalog_.tables()) {
    fs::create_directories(table_dir(table->def.oid), ec);
    if (ec) throw Error(SqlState::io_error, "could not create directory \"" + table_dir(table->def.oid) + "\": " + ec.message());
  }
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    uint32_t oid = 0;
    try {
      oid = static_cast<uint32_t>(std::stoul(name));
    } catch (...) {
      continue;  // not ours
    }
    const auto snap = catalog_.find_table(oid);
    if (!snap) {
      // A dropped table, or one whose CREATE never committed.
      removed += fs::remove_all(entry.path(), ec) > 0;
      continue;
    }
    std::set<std::pair<uint64_t, int>> live;
    std::map<int, size_t> column_of_slot;
    for (size_t a = 0; a < snap->def.columns.size(); ++a) column_of_slot[snap->def.slot(a)] = a;
    for (const auto& c : snap->chunks)
      for (size_t a = 0; a < snap->def.columns.size(); ++a)
        if (has_file(snap->def, a, c.chunk_id)) live.insert({c.chunk_id, snap->def.slot(a)});
    for (const auto& f : fs::directory_iterator(entry.path(), ec)) {
      const std::string fname = f.path().filename().string();
      unsigned long long chunk = 0;
      int column = 0;
      char ext[8] = {};
      if (is_private_copy(fname)) {
        removed += fs::remove(f.path(), ec);  // keep_private's copy, cut short by a crash
        continue;
      }
      if (std::sscanf(fname.c_str(), "%llu.%d.%3s", &chunk, &column, ext) == 3 && std::string_view(ext) == "col") {
        if (!live.count({chunk, column})) removed += fs::remove(f.path(), ec);
      } else if (std::sscanf(fname.c_str(), "%d.%4s", &column, ext) == 2 && std::string_view(ext) == "dict") {
        const auto live_column = column_of_slot.find(column);
        if (live_column == column_of_slot.end()) {
          removed += fs::remove(f.path(), ec);  // a dropped column's
          continue;
        }
        const uint64_t committed = live_column->second < snap->dictionaries.size()
                                       ? snap->dictionaries[live_column->second].bytes
                                       : 0;
        if (fs::file_size(f.path(), ec) > committed) {
          keep_private(f.path().string(), committed);
          File file = File::append(f.path().string());
          file.truncate(committed);
          file.sync();
          ++removed;
        }
      }
    }
    sync_directory(entry.path().string());
  }
  sync_directory(root);
  return removed;
}

std::shared_ptr<const StringDictionary> TableStore::dictionary(const catalog::TableSnapshot& snapshot, int column,
                                                               const CancelToken* cancel) {
  const auto col = static_cast<size_t>(column);
  const auto& want = snapshot.dictionaries.at(col);
  // The store's dictionaries are by slot: a DROP COLUMN moves column indexes, not slots.
  const auto slot = static_cast<size_t>(snapshot.def.slot(col));
  auto st = state(snapshot.def.oid);
  std::lock_guard lock(st->dict_mutex);
  if (snapshot.version < st->epoch_version) {
    // A snapshot from before a TRUNCATE: its codes index the old dictionary.
    if (slot < st->previous_epoch.size() && st->previous_epoch[slot]) return st->previous_epoch[slot];
    throw Error(SqlState::object_not_in_prerequisite_state,
                "table \"" + snapshot.def.name + "\" was truncated while this statement was reading it");
  }
  if (st->dictionaries.size() <= slot) {
    st->dictionaries.resize(slot + 1);
    st->loaded.resize(slot + 1);
  }
  auto& d = st->dictionaries[slot];
  if (d && st->loaded[slot].entries >= want.entries) return d;
  auto loaded = std::make_shared<StringDictionary>(
      load_dictionary(dictionary_path(snapshot.def.oid, static_cast<int>(slot)), want,
                      "dictionary of column \"" + snapshot.def.columns[col].name + "\" of table \"" +
                          snapshot.def.name + "\"",
                      cancel));
  d = std::move(loaded);
  st->loaded[slot] = want;
  return d;
}

void TableStore::publish_dictionaries(const catalog::TableDef& def,
                                      const std::vector<std::shared_ptr<const StringDictionary>>& dicts,
                                      const std::vector<catalog::DictionaryState>& states) {
  auto st = state(def.oid);
  std::lock_guard lock(st->dict_mutex);
  const auto slots = static_cast<size_t>(def.unused_slot());
  if (st->dictionaries.size() < slots) {
    st->dictionaries.resize(slots);
    st->loaded.resize(slots);
  }
  for (size_t c = 0; c < dicts.size(); ++c) {
    if (!dicts[c]) continue;
    const auto slot = static_cast<size_t>(def.slot(c));
    st->dictionaries[slot] = dicts[c];
    st->loaded[slot] = states[c];
  }
}

std::optional<catalog::DictionaryState> TableStore::link_committed_dictionary(const StringDictionary& dictionary,
                                                                              const std::string& path) {
  std::lock_guard states_lock(states_mutex_);
  for (const auto& [oid, st] : states_) {
    std::lock_guard lock(st->dict_mutex);
    for (size_t slot = 0; slot < st->dictionaries.size() && slot < st->loaded.size(); ++slot) {
      if (st->dictionaries[slot].get() != &dictionary) continue;
      const catalog::DictionaryState& state = st->loaded[slot];
      if (static_cast<uint64_t>(dictionary.size()) != state.entries || state.entries == 0) return std::nullopt;
      if (!link_dictionary(dictionary_path(oid, static_cast<int>(slot)), path)) return std::nullopt;
      return state;
    }
  }
  return std::nullopt;
}

std::shared_ptr<const ChunkBatch> TableStore::read_chunk(const catalog::TableSnapshot& snapshot, size_t chunk_index,
                                                         std::span<const int> columns, const CancelToken* cancel) {
  const catalog::ChunkInfo& chunk = snapshot.chunks.at(chunk_index);
  const std::vector<int> cols(columns.begin(), columns.end());
  // Cached by slot, which names the same bytes before and after a DROP COLUMN.
  std::vector<int> slots;
  slots.reserve(cols.size());
  for (const int c : cols) slots.push_back(snapshot.def.slot(static_cast<size_t>(c)));
  const std::string key = ChunkCache::key(snapshot.def.oid, chunk.chunk_id, slots);
  queue_retired();
  if (auto hit = cache_.get(key)) return hit;
  // Not cached again: it shares the cached chunk's bytes, which the cache
  // would otherwise count twice against its bound.
  if (auto projected = project_written(snapshot, chunk.chunk_id, cols)) return projected;
  auto batch = std::make_shared<ChunkBatch>();
  batch->rows = chunk.rows;
  batch->columns.reserve(cols.size());
  for (const int c : cols) {
    const auto& def = snapshot.def.columns.at(static_cast<size_t>(c));
    const std::string what = "chunk " + std::to_string(chunk.chunk_id) + " of table \"" + snapshot.def.name +
                             "\" (column \"" + def.name + "\")";
    const int slot = snapshot.def.slot(static_cast<size_t>(c));
    ColumnVector v = !has_file(snapshot.def, static_cast<size_t>(c), chunk.chunk_id)
                         ? missing_column(def, chunk.rows)
                     : chunk.inlined ? read_inlined(catalog_, snapshot.def, chunk, static_cast<size_t>(c), def.type, what)
                                     : read_chunk_file(chunk_path(snapshot.def.oid, chunk.chunk_id, slot), def.type,
                                                       chunk.rows, what);
    if (is_string_stored(def.type.id)) {
      v.dictionary = dictionary(snapshot, c, cancel);
      // Codes beyond the dictionary would be read as garbage: treat as corruption.
      const int32_t* codes = v.values<int32_t>();
      const int32_t size = v.dictionary->size();
      for (size_t i = 0; i < v.rows; ++i) {
        if (!v.is_null(i) && (codes[i] < 0 || codes[i] >= size))
          throw Error(SqlState::data_corrupted, "could not read " + what + ": dictionary code out of range");
      }
    }
    v.freeze();  // a projection of the cached chunk, or a copy of a column, then shares it
    batch->columns.push_back(std::move(v));
  }
  cache_.put(key, snapshot.def.oid, batch);
  return batch;
}

std::string TableStore::whole_chunk_key(const catalog::TableDef& def, uint64_t chunk_id) {
  std::vector<int> slots;
  for (size_t c = 0; c < def.columns.size(); ++c) slots.push_back(def.slot(c));
  return ChunkCache::key(def.oid, chunk_id, slots);
}

void TableStore::cache_written(const catalog::TableSnapshot& committed, uint64_t chunk_id,
                               std::shared_ptr<ChunkBatch> batch) {
  if (batch->columns.size() != committed.def.columns.size()) return;
  for (size_t c = 0; c < batch->columns.size(); ++c) {
    if (is_string_stored(committed.def.columns[c].type.id)) batch->columns[c].dictionary = dictionary(committed, static_cast<int>(c));
    batch->columns[c].freeze();
  }
  cache_.put(whole_chunk_key(committed.def, chunk_id), committed.def.oid, std::move(batch));
}

std::shared_ptr<const ChunkBatch> TableStore::project_written(const catalog::TableSnapshot& snapshot, uint64_t chunk_id,
                                                              const std::vector<int>& columns) {
  const auto whole = cache_.get(whole_chunk_key(snapshot.def, chunk_id));
  if (!whole) return nullptr;
  // The columns asked for, sharing the cached chunk's frozen bytes.
  auto batch = std::make_shared<ChunkBatch>();
  batch->rows = whole->rows;
  batch->columns.reserve(columns.size());
  for (const int c : columns) batch->columns.push_back(whole->columns.at(static_cast<size_t>(c)));
  return batch;
}

std::shared_ptr<const catalog::TableSnapshot> TableStore::create_table(catalog::TableDef def, bool if_not_exists) {
  auto snap = catalog_.create_table(std::move(def), if_not_exists);
  if (!snap) return nullptr;
  std::error_code ec;
  fs::create_directories(table_dir(snap->def.oid), ec);
  if (ec) throw Error(SqlState::io_error, "could not create directory \"" + table_dir(snap->def.oid) + "\": " + ec.message());
  return snap;
}

void TableStore::drop_table(uint32_t oid, const CancelToken* cancel) {
  TableLockGuard write(&locks_, oid, cancel);  // waits for a running append
  auto before = catalog_.find_table(oid);
  catalog_.drop_table(oid);
  forget_table(oid, std::move(before));
}

std::shared_ptr<const catalog::TableSnapshot> TableStore::alter_table(
    uint32_t oid, const std::function<catalog::TableDef(const catalog::TableSnapshot&)>& change,
    const CancelToken* cancel) {
  TableLockGuard write(&locks_, oid, cancel);
  auto current = catalog_.find_table(oid);
  if (!current) throw Error(SqlState::undefined_table, "relation with OID " + std::to_string(oid) + " does not exist");
  catalog::TableDef def = change(*current);
  bool same_columns = def.columns.size() == current->def.columns.size();
  for (size_t c = 0; same_columns && c < def.columns.size(); ++c) same_columns = def.slot(c) == current->def.slot(c);
  if (same_columns) return catalog_.replace_definition(def);
  const catalog::Catalog::ColumnLayout layout = relayout(*current, def);
  auto snap = catalog_.replace_definition(def, &layout);
  // The dropped columns' files, deleted once no reader holds the old snapshot.
  std::set<int> kept;
  for (size_t c = 0; c < def.columns.size(); ++c) kept.insert(def.slot(c));
  Retired retired{current, {}, {}};
  for (size_t c = 0; c < current->def.columns.size(); ++c) {
    const int slot = current->def.slot(c);
    if (kept.count(slot)) continue;
    for (const auto& chunk : current->chunks)
      if (has_file(current->def, c, chunk.chunk_id) && !chunk.inlined)
        retired.files.push_back(chunk_path(oid, chunk.chunk_id, slot));
    for (auto& key : inlined_bytes(*current, nullptr, slot)) retired.chunk_bytes.push_back(key);
    if (is_string_stored(current->def.columns[c].type.id)) retired.files.push_back(dictionary_path(oid, slot));
  }
  retire(std::move(retired));
  return snap;
}

catalog::Catalog::ColumnLayout TableStore::relayout(const catalog::TableSnapshot& current, catalog::TableDef& after) {
  const uint32_t oid = current.def.oid;
  std::map<int, size_t> before_of_slot;
  for (size_t c = 0; c < current.def.columns.size(); ++c) before_of_slot[current.def.slot(c)] = c;
  // Chunks from now on get ids from here (TableAppender starts at the same bound).
  uint64_t first_new_chunk = std::max(current.next_chunk_id, state(oid)->chunk_id_floor);
  for (const auto& chunk : current.chunks) first_new_chunk = std::max(first_new_chunk, chunk.chunk_id + 1);
  catalog::Catalog::ColumnLayout layout;
  layout.chunks = current.chunks;
  for (auto& chunk : layout.chunks) chunk.stats.clear();
  for (size_t c = 0; c < after.columns.size(); ++c) {
    auto old = before_of_slot.find(after.slot(c));
    if (old != before_of_slot.end()) {
      for (size_t i = 0; i < layout.chunks.size(); ++i) layout.chunks[i].stats.push_back(current.chunks[i].stats[old->second]);
      layout.dictionaries.push_back(current.dictionaries.at(old->second));
      continue;
    }
    catalog::ColumnDef& added = after.columns[c];
    catalog::DictionaryState dictionary;
    if (current.chunks.empty()) {
      added.missing.reset();  // no row predates the column
    } else if (added.missing && is_string_stored(added.type.id)) {
      // The executor gives a text value as its text: it becomes code 0 of the new column's dictionary.
      StringDictionary entries;
      const int32_t code = entries.intern(*added.missing);
      dictionary = append_dictionary(dictionary_path(oid, after.slot(c)), {}, entries);
      added.missing = std::string(reinterpret_cast<const char*>(&code), sizeof code);
    }
    added.first_chunk = first_new_chunk;
    layout.dictionaries.push_back(dictionary);
    ColumnVector one = missing_column(added, 1);
    catalog::ColumnStats stats = compute_column_stats(one);
    for (auto& chunk : layout.chunks) {
      stats.null_count = added.missing ? 0 : chunk.rows;
      chunk.stats.push_back(stats);
    }
  }
  return layout;
}

void TableStore::forget_table(uint32_t oid, std::shared_ptr<const catalog::TableSnapshot> before) {
  cache_.evict_table(oid);
  {
    std::lock_guard lock(states_mutex_);
    states_.erase(oid);
  }
  // Leftovers after a crash are removed by recover().
  std::vector<catalog::ChunkBytesKey> bytes;
  if (before && std::any_of(before->chunks.begin(), before->chunks.end(), [](const auto& c) { return c.inlined; }))
    bytes.push_back({oid, std::nullopt, std::nullopt});
  retire(Retired{std::move(before), {}, table_dir(oid), std::move(bytes)});
}

void TableStore::retire_chunks(std::shared_ptr<const catalog::TableSnapshot> before,
                               const std::vector<uint64_t>& chunk_ids) {
  if (chunk_ids.empty()) return;
  const uint32_t oid = before->def.oid;
  std::vector<std::string> files;
  for (const uint64_t id : chunk_ids) {
    cache_.evict_chunk(oid, id);
    const bool inlined = std::any_of(before->chunks.begin(), before->chunks.end(),
                                     [id](const catalog::ChunkInfo& c) { return c.chunk_id == id && c.inlined; });
    for (size_t c = 0; c < before->def.columns.size() && !inlined; ++c)
      files.push_back(chunk_path(oid, id, before->def.slot(c)));
  }
  auto bytes = inlined_bytes(*before, &chunk_ids);
  Retired retired{std::move(before), std::move(files), {}, std::move(bytes)};
  retire(std::move(retired));
}

void TableStore::reset_dictionaries(const catalog::TableSnapshot& committed) {
  const uint32_t oid = committed.def.oid;
  for (size_t c = 0; c < committed.def.columns.size(); ++c) {
    if (!is_string_stored(committed.def.columns[c].type.id)) continue;
    const std::string path = dictionary_path(oid, committed.def.slot(c));
    std::error_code ec;
    const uint64_t bytes = c < committed.dictionaries.size() ? committed.dictionaries[c].bytes : 0;
    if (fs::exists(path, ec) && fs::file_size(path, ec) > bytes) {
      keep_private(path, bytes);
      File file = File::append(path);
      file.truncate(bytes);
      file.sync();
    }
  }
  auto st = state(oid);
  std::lock_guard lock(st->dict_mutex);
  st->dictionaries.assign(static_cast<size_t>(committed.def.unused_slot()), nullptr);
  st->loaded.assign(static_cast<size_t>(committed.def.unused_slot()), {});
}

std::shared_ptr<const catalog::TableSnapshot> TableStore::truncate_table(uint32_t oid, const CancelToken* cancel) {
  auto st = state(oid);
  TableLockGuard write(&locks_, oid, cancel);
  const auto before = catalog_.find_table(oid);
  auto snap = catalog_.truncate_table(oid);
  if (!snap) return nullptr;
  cache_.evict_table(oid);
  {
    std::lock_guard lock(st->dict_mutex);
    st->previous_epoch = st->dictionaries;
    st->epoch_version = snap->version;
    st->dictionaries.assign(static_cast<size_t>(snap->def.unused_slot()), nullptr);
    st->loaded.assign(static_cast<size_t>(snap->def.unused_slot()), {});
  }
  // The next append rewrites the dictionary files from offset 0 (their
  // committed length is now 0); old readers use the in-memory previous epoch.
  for (size_t c = 0; c < snap->def.columns.size(); ++c) {
    std::error_code ec;
    fs::remove(dictionary_path(oid, snap->def.slot(c)), ec);
  }
  if (before) {
    Retired r{before, {}, {}, inlined_bytes(*before, nullptr)};
    for (const auto& c : before->chunks)
      for (size_t col = 0; col < before->def.columns.size(); ++col)
        if (!c.inlined) r.files.push_back(chunk_path(oid, c.chunk_id, before->def.slot(col)));
    retire(std::move(r));
  }
  return snap;
}

void TableStore::remove_chunk_files(const catalog::TableDef& def, uint64_t chunk_id) {
  for (size_t c = 0; c < def.columns.size(); ++c) {
    std::error_code ec;
    fs::remove(chunk_path(def.oid, chunk_id, def.slot(c)), ec);
  }
}

std::unique_ptr<TableAppender> TableStore::begin_append(uint32_t oid, const CancelToken* cancel) {
  return std::make_unique<TableAppender>(*this, oid, nullptr, cancel);
}

void TableStore::append_grouped(uint32_t oid, const std::function<void(TableAppender&)>& fill,
                                const CancelToken* cancel) {
  // A transaction block may hold the table for long: wait for it here, where
  // the wait can be cancelled, rather than in the group's leader.
  locks_.wait_free(oid, cancel);
  if (!options_.group_commit) {
    auto appender = begin_append(oid, cancel);
    fill(*appender);
    appender->commit();
    return;
  }
  const auto table = state(oid);  // keeps the queue alive while callers wait on it
  table->group_commit.append(*this, oid, fill);
}

uint64_t TableStore::grouped_commits(uint32_t oid) { return state(oid)->group_commit.grouped_commits(); }

}  // namespace tally::storage
