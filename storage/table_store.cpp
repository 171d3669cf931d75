#include "storage/table_store.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "common/error.hpp"
#include "storage/chunk_file.hpp"
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
}

TableStore::~TableStore() { collect_retired(/*force=*/true); }

void TableStore::retire(Retired retired) {
  {
    std::lock_guard lock(retired_mutex_);
    retired_.push_back(std::move(retired));
  }
  collect_retired();
}

void TableStore::collect_retired(bool force) {
  std::vector<Retired> ready;
  {
    std::lock_guard lock(retired_mutex_);
    if (retired_.empty()) return;
    for (auto it = retired_.begin(); it != retired_.end();) {
      // use_count 1: only this list still holds the snapshot.
      if (force || it->snapshot.use_count() == 1) {
        ready.push_back(std::move(*it));
        it = retired_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& r : ready) {
    std::error_code ec;
    for (const auto& f : r.files) fs::remove(f, ec);
    if (!r.directory.empty()) fs::remove_all(r.directory, ec);
  }
}

std::string TableStore::table_dir(uint32_t oid) const { return catalog_.data_dir() + "/tables/" + std::to_string(oid); }

std::string TableStore::chunk_path(uint32_t oid, uint64_t chunk_id, int column) const {
  return table_dir(oid) + "/" + std::to_string(chunk_id) + "." + std::to_string(column) + ".col";
}

std::string TableStore::dictionary_path(uint32_t oid, int column) const {
  return table_dir(oid) + "/" + std::to_string(column) + ".dict";
}

std::shared_ptr<TableStore::TableState> TableStore::state(uint32_t oid) {
  std::lock_guard lock(states_mutex_);
  auto& s = states_[oid];
  if (!s) s = std::make_shared<TableState>();
  return s;
}

size_t TableStore::recover() {
  size_t removed = 0;
  const std::string root = catalog_.data_dir() + "/tables";
  std::error_code ec;
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
    for (const auto& c : snap->chunks)
      for (size_t a = 0; a < snap->def.columns.size(); ++a) live.insert({c.chunk_id, static_cast<int>(a)});
    for (const auto& f : fs::directory_iterator(entry.path(), ec)) {
      const std::string fname = f.path().filename().string();
      unsigned long long chunk = 0;
      int column = 0;
      char ext[8] = {};
      if (std::sscanf(fname.c_str(), "%llu.%d.%3s", &chunk, &column, ext) == 3 && std::string_view(ext) == "col") {
        if (!live.count({chunk, column})) removed += fs::remove(f.path(), ec);
      } else if (std::sscanf(fname.c_str(), "%d.%4s", &column, ext) == 2 && std::string_view(ext) == "dict") {
        const uint64_t committed = column >= 0 && static_cast<size_t>(column) < snap->dictionaries.size()
                                       ? snap->dictionaries[static_cast<size_t>(column)].bytes
                                       : 0;
        if (fs::file_size(f.path(), ec) > committed) {
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

std::shared_ptr<const StringDictionary> TableStore::dictionary(const catalog::TableSnapshot& snapshot, int column) {
  const auto col = static_cast<size_t>(column);
  const auto& want = snapshot.dictionaries.at(col);
  auto st = state(snapshot.def.oid);
  std::lock_guard lock(st->dict_mutex);
  if (snapshot.version < st->epoch_version) {
    // A snapshot from before a TRUNCATE: its codes index the old dictionary.
    if (col < st->previous_epoch.size() && st->previous_epoch[col]) return st->previous_epoch[col];
    throw Error(SqlState::object_not_in_prerequisite_state,
                "table \"" + snapshot.def.name + "\" was truncated while this statement was reading it");
  }
  if (st->dictionaries.size() < snapshot.def.columns.size()) {
    st->dictionaries.resize(snapshot.def.columns.size());
    st->loaded_entries.resize(snapshot.def.columns.size(), 0);
  }
  auto& d = st->dictionaries[col];
  if (d && st->loaded_entries[col] >= want.entries) return d;
  auto loaded = std::make_shared<StringDictionary>(
      load_dictionary(dictionary_path(snapshot.def.oid, column), want,
                      "dictionary of column \"" + snapshot.def.columns[col].name + "\" of table \"" +
                          snapshot.def.name + "\""));
  d = std::move(loaded);
  st->loaded_entries[col] = want.entries;
  return d;
}

void TableStore::publish_dictionaries(uint32_t oid, const std::vector<std::shared_ptr<const StringDictionary>>& dicts,
                                      const std::vector<catalog::DictionaryState>& states) {
  auto st = state(oid);
  std::lock_guard lock(st->dict_mutex);
  st->dictionaries.resize(dicts.size());
  st->loaded_entries.resize(dicts.size(), 0);
  for (size_t c = 0; c < dicts.size(); ++c) {
    if (!dicts[c]) continue;
    st->dictionaries[c] = dicts[c];
    st->loaded_entries[c] = states[c].entries;
  }
}

std::shared_ptr<const ChunkBatch> TableStore::read_chunk(const catalog::TableSnapshot& snapshot, size_t chunk_index,
                                                         std::span<const int> columns) {
  const catalog::ChunkInfo& chunk = snapshot.chunks.at(chunk_index);
  const std::vector<int> cols(columns.begin(), columns.end());
  const std::string key = ChunkCache::key(snapshot.def.oid, chunk.chunk_id, cols);
  if (auto hit = cache_.get(key)) return hit;
  collect_retired();
  auto batch = std::make_shared<ChunkBatch>();
  batch->rows = chunk.rows;
  batch->columns.reserve(cols.size());
  for (const int c : cols) {
    const auto& def = snapshot.def.columns.at(static_cast<size_t>(c));
    const std::string what = "chunk " + std::to_string(chunk.chunk_id) + " of table \"" + snapshot.def.name +
                             "\" (column \"" + def.name + "\")";
    ColumnVector v = read_chunk_file(chunk_path(snapshot.def.oid, chunk.chunk_id, c), def.type, chunk.rows, what);
    if (is_text_kind(def.type.id)) {
      v.dictionary = dictionary(snapshot, c);
      // Codes beyond the dictionary would be read as garbage: treat as corruption.
      const int32_t* codes = v.values<int32_t>();
      const int32_t size = v.dictionary->size();
      for (size_t i = 0; i < v.rows; ++i) {
        if (!v.is_null(i) && (codes[i] < 0 || codes[i] >= size))
          throw Error(SqlState::data_corrupted, "could not read " + what + ": dictionary code out of range");
      }
    }
    batch->columns.push_back(std::move(v));
  }
  cache_.put(key, snapshot.def.oid, batch);
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
  return catalog_.replace_definition(change(*current));
}

void TableStore::forget_table(uint32_t oid, std::shared_ptr<const catalog::TableSnapshot> before) {
  cache_.evict_table(oid);
  {
    std::lock_guard lock(states_mutex_);
    states_.erase(oid);
  }
  // Leftovers after a crash are removed by recover().
  retire(Retired{std::move(before), {}, table_dir(oid)});
}

void TableStore::retire_chunks(std::shared_ptr<const catalog::TableSnapshot> before,
                               const std::vector<uint64_t>& chunk_ids) {
  if (chunk_ids.empty()) return;
  const uint32_t oid = before->def.oid;
  const size_t columns = before->def.columns.size();
  Retired retired{std::move(before), {}, {}};
  for (const uint64_t id : chunk_ids) {
    cache_.evict_chunk(oid, id);
    for (size_t c = 0; c < columns; ++c) retired.files.push_back(chunk_path(oid, id, static_cast<int>(c)));
  }
  retire(std::move(retired));
}

void TableStore::reset_dictionaries(const catalog::TableSnapshot& committed) {
  const uint32_t oid = committed.def.oid;
  for (size_t c = 0; c < committed.def.columns.size(); ++c) {
    if (!is_text_kind(committed.def.columns[c].type.id)) continue;
    const std::string path = dictionary_path(oid, static_cast<int>(c));
    std::error_code ec;
    const uint64_t bytes = c < committed.dictionaries.size() ? committed.dictionaries[c].bytes : 0;
    if (fs::exists(path, ec) && fs::file_size(path, ec) > bytes) {
      File file = File::append(path);
      file.truncate(bytes);
      file.sync();
    }
  }
  auto st = state(oid);
  std::lock_guard lock(st->dict_mutex);
  st->dictionaries.assign(committed.def.columns.size(), nullptr);
  st->loaded_entries.assign(committed.def.columns.size(), 0);
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
    st->dictionaries.assign(snap->def.columns.size(), nullptr);
    st->loaded_entries.assign(snap->def.columns.size(), 0);
  }
  // The next append rewrites the dictionary files from offset 0 (their
  // committed length is now 0); old readers use the in-memory previous epoch.
  for (size_t c = 0; c < snap->def.columns.size(); ++c) {
    std::error_code ec;
    fs::remove(dictionary_path(oid, static_cast<int>(c)), ec);
  }
  if (before) {
    Retired r{before, {}, {}};
    for (const auto& c : before->chunks)
      for (size_t col = 0; col < before->def.columns.size(); ++col)
        r.files.push_back(chunk_path(oid, c.chunk_id, static_cast<int>(col)));
    retire(std::move(r));
  }
  return snap;
}

void TableStore::remove_chunk_files(uint32_t oid, uint64_t chunk_id, size_t columns) {
  for (size_t c = 0; c < columns; ++c) {
    std::error_code ec;
    fs::remove(chunk_path(oid, chunk_id, static_cast<int>(c)), ec);
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
