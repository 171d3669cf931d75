#include "storage/write_transaction.hpp"

#include <algorithm>
#include <filesystem>

#include "catalog/catalog.hpp"
#include "common/error.hpp"
#include "common/statement_timeline.hpp"
#include "storage/file_io.hpp"
#include "storage/table_appender.hpp"
#include "storage/table_store.hpp"

namespace fs = std::filesystem;

namespace tally::storage {
namespace {

bool has_chunk(const catalog::TableSnapshot& snapshot, uint64_t id) {
  return std::any_of(snapshot.chunks.begin(), snapshot.chunks.end(),
                     [id](const catalog::ChunkInfo& c) { return c.chunk_id == id; });
}

Error missing_table(uint32_t oid) {
  return Error(SqlState::undefined_table, "relation with OID " + std::to_string(oid) + " does not exist");
}

}  // namespace

WriteTransaction::WriteTransaction(TableStore& store, const CancelToken* cancel) : store_(store), cancel_(cancel) {}

WriteTransaction::~WriteTransaction() {
  try {
    rollback();
  } catch (...) {
    // Files left behind are orphans that recover() removes at start-up.
  }
}

std::shared_ptr<const catalog::TableSnapshot> WriteTransaction::find_table(std::string_view name) const {
  for (const auto& [oid, p] : tables_)
    if (p.working && p.working->def.name == name) return p.working;
  auto committed = store_.catalog().find_table(name, "public");
  // A committed table this block wrote under the same name was dropped here
  // (tables are never renamed).
  if (committed && tables_.count(committed->def.oid)) return nullptr;
  return committed;
}

bool WriteTransaction::changed(std::string_view name) const {
  for (const auto& [oid, p] : tables_) {
    if ((p.working && p.working->def.name == name) || (p.base && p.base->def.name == name)) return true;
  }
  return false;
}

WriteTransaction::Pending& WriteTransaction::touch(uint32_t oid) {
  if (done_) throw Error(SqlState::invalid_transaction_state, "the transaction block has ended");
  if (auto it = tables_.find(oid); it != tables_.end()) {
    if (!it->second.working) throw missing_table(oid);
    return it->second;
  }
  store_.locks_.acquire(oid, this, cancel_);
  Pending p;
  p.locked = true;
  // Read under the lock: no other writer can change the table until this block ends.
  p.base = store_.catalog().find_table(oid);
  if (!p.base) {
    store_.locks_.release(oid, this);
    throw missing_table(oid);
  }
  p.working = p.base;
  return tables_.emplace(oid, std::move(p)).first->second;
}

std::shared_ptr<const catalog::TableSnapshot> WriteTransaction::create_table(catalog::TableDef def,
                                                                             bool if_not_exists) {
  if (done_) throw Error(SqlState::invalid_transaction_state, "the transaction block has ended");
  if (find_table(def.name)) {
    if (if_not_exists) return nullptr;
    throw Error(SqlState::duplicate_table, "relation \"" + def.name + "\" already exists");
  }
  if (def.oid == 0) def.oid = store_.catalog().reserve_oid();
  for (auto& key : def.keys) {
    key.oid = store_.catalog().reserve_oid();
    key.index_oid = store_.catalog().reserve_oid();
  }
  std::error_code ec;
  fs::create_directories(store_.table_dir(def.oid), ec);
  if (ec) throw Error(SqlState::io_error, "could not create directory \"" + store_.table_dir(def.oid) + "\": " + ec.message());
  auto snap = std::make_shared<catalog::TableSnapshot>();
  snap->dictionaries.assign(def.columns.size(), catalog::DictionaryState{});
  snap->def = std::move(def);
  Pending p;
  p.working = snap;
  tables_[snap->def.oid] = std::move(p);
  ++writes_;
  return snap;
}

void WriteTransaction::drop_table(uint32_t oid) {
  touch(oid).working = nullptr;
  ++writes_;
}

void WriteTransaction::truncate_table(uint32_t oid) {
  Pending& p = touch(oid);
  // The dictionaries stay: codes in them are only ever added, and keeping
  // them lets a rollback restore the table without restoring files.
  auto working = std::make_shared<catalog::TableSnapshot>(*p.working);
  working->chunks.clear();
  p.working = std::move(working);
  ++writes_;
}

std::shared_ptr<const catalog::TableSnapshot> WriteTransaction::alter_table(
    uint32_t oid, const std::function<catalog::TableDef(const catalog::TableSnapshot&)>& change) {
  Pending& p = touch(oid);
  if (!p.working) throw Error(SqlState::undefined_table, "relation with OID " + std::to_string(oid) + " does not exist");
  catalog::TableDef def = change(*p.working);
  for (const auto& [other, q] : tables_)
    if (other != oid && q.working && q.working->def.name == def.name)
      throw Error(SqlState::duplicate_table, "relation \"" + def.name + "\" already exists");
  auto working = std::make_shared<catalog::TableSnapshot>(*p.working);
  working->def = std::move(def);
  for (auto& key : working->def.keys) {
    if (key.oid == 0) key.oid = store_.catalog().reserve_oid();
    if (key.index_oid == 0) key.index_oid = store_.catalog().reserve_oid();
  }
  p.working = working;
  ++writes_;
  return working;
}

std::unique_ptr<TableAppender> WriteTransaction::begin_append(uint32_t oid) {
  touch(oid);
  return std::make_unique<TableAppender>(store_, oid, this);
}

void WriteTransaction::record_append(uint32_t oid, std::shared_ptr<const catalog::TableSnapshot> working,
                                     const std::vector<uint64_t>& written_chunks,
                                     const std::vector<std::shared_ptr<const StringDictionary>>& dictionaries,
                                     std::vector<std::pair<uint64_t, std::shared_ptr<ChunkBatch>>> written) {
  Pending& p = tables_.at(oid);
  for (size_t c = 0; c < dictionaries.size() && c < working->def.columns.size(); ++c)
    if (dictionaries[c]) p.dictionaries[working->def.slot(c)] = dictionaries[c];
  p.working = std::move(working);
  // Chunks kept for the cache: not those this append replaced (many small
  // INSERTs rewrite one tail chunk), and no more than one append's budget.
  std::erase_if(p.written, [&](const auto& w) { return !has_chunk(*p.working, w.first); });
  for (auto& w : written) {
    for (const auto& column : w.second->columns) written_bytes_ += column.data.size() + column.validity.size();
    if (written_bytes_ <= store_.written_cache_budget()) p.written.push_back(std::move(w));
  }
  p.own_chunks.insert(p.own_chunks.end(), written_chunks.begin(), written_chunks.end());
  ++writes_;
}

void WriteTransaction::publish_dictionaries(const Pending& p) const {
  const catalog::TableSnapshot& now = *p.working;
  std::vector<std::shared_ptr<const StringDictionary>> dicts(now.def.columns.size());
  bool any = false;
  for (size_t c = 0; c < dicts.size() && c < now.dictionaries.size(); ++c) {
    const auto it = p.dictionaries.find(now.def.slot(c));
    // Only a dictionary holding exactly the committed entries (a later
    // statement of the block may have changed the column since).
    if (it == p.dictionaries.end() || static_cast<uint64_t>(it->second->size()) != now.dictionaries[c].entries) continue;
    dicts[c] = it->second;
    any = true;
  }
  if (any) store_.publish_dictionaries(now.def, dicts, now.dictionaries);
}

void WriteTransaction::remove_chunks(uint32_t oid, const catalog::TableDef& def, const std::vector<uint64_t>& ids) {
  for (const uint64_t id : ids) {
    store_.cache_.evict_chunk(oid, id);
    store_.remove_chunk_files(def, id);
  }
}

void WriteTransaction::remove_own_files(uint32_t oid, const Pending& p, bool keep_live) {
  std::vector<uint64_t> ids;
  for (const uint64_t id : p.own_chunks)
    if (!keep_live || !p.working || !has_chunk(*p.working, id)) ids.push_back(id);
  remove_chunks(oid, (p.working ? p.working : p.base)->def, ids);
}

struct WriteTransaction::Savepoint {
  std::map<uint32_t, Pending> tables;
  uint64_t writes = 0;
};

std::shared_ptr<const WriteTransaction::Savepoint> WriteTransaction::savepoint() const {
  return std::make_shared<const Savepoint>(Savepoint{tables_, writes_});
}

void WriteTransaction::rollback_to(const Savepoint& savepoint) {
  if (done_) return;
  for (auto it = tables_.begin(); it != tables_.end();) {
    const uint32_t oid = it->first;
    Pending& now = it->second;
    const auto saved = savepoint.tables.find(oid);
    const Pending* then = saved == savepoint.tables.end() ? nullptr : &saved->second;
    std::vector<uint64_t> written_since;
    for (const uint64_t id : now.own_chunks) {
      if (!then || std::find(then->own_chunks.begin(), then->own_chunks.end(), id) == then->own_chunks.end())
        written_since.push_back(id);
    }
    remove_chunks(oid, (now.working ? now.working : now.base)->def, written_since);
    if (!now.base && !then) {  // created since the savepoint
      store_.cache_.evict_table(oid);
      std::error_code ec;
      fs::remove_all(store_.table_dir(oid), ec);
      it = tables_.erase(it);
      continue;
    }
    Pending restored = then ? *then : Pending{now.base, now.base, {}, {}, {}, false};
    restored.locked = now.locked;
    now = std::move(restored);
    // Dictionary entries added since must not be found by the next append.
    if (now.working) store_.reset_dictionaries(*now.working);
    ++it;
  }
  writes_ = savepoint.writes;
}

void WriteTransaction::release_locks() {
  for (auto& [oid, p] : tables_) {
    if (p.locked) store_.locks_.release(oid, this);
    p.locked = false;
  }
}

void WriteTransaction::sync_targets(std::vector<std::string>& files, std::vector<std::string>& directories) const {
  bool created = false;
  for (const auto& [oid, p] : tables_) {
    if (!p.working) continue;
    const auto& def = p.working->def;
    const size_t files_before = files.size();
    for (const uint64_t id : p.own_chunks) {
      const auto chunk = std::find_if(p.working->chunks.begin(), p.working->chunks.end(),
                                      [id](const catalog::ChunkInfo& c) { return c.chunk_id == id; });
      if (chunk == p.working->chunks.end() || chunk->inlined) continue;
      for (size_t c = 0; c < def.columns.size(); ++c) files.push_back(store_.chunk_path(oid, id, def.slot(c)));
    }
    for (size_t c = 0; c < def.columns.size(); ++c) {
      const uint64_t before = p.base && c < p.base->dictionaries.size() ? p.base->dictionaries[c].bytes : 0;
      if (c < p.working->dictionaries.size() && p.working->dictionaries[c].bytes != before)
        files.push_back(store_.dictionary_path(oid, def.slot(c)));
    }
    // A table whose new chunks are all inlined has no new file to name.
    if (files.size() == files_before) continue;
    directories.push_back(store_.table_dir(oid));
    created = created || !p.base;
  }
  // A created table's directory entry too, or its files could be lost with it.
  if (created) directories.push_back(store_.catalog().data_dir() + "/tables");
}

namespace {

// The most bytes of files a one-round commit syncs: what TableStore::recover
// reads back after a crash for each table such a commit created.
constexpr uint64_t kOneRoundBytes = uint64_t{16} << 20;

bool small_files(const std::vector<std::string>& files) {
  uint64_t bytes = 0;
  for (const std::string& f : files) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(f, ec);
    if (ec) return false;
    bytes += size;
  }
  return bytes <= kOneRoundBytes;
}

}  // namespace

void WriteTransaction::commit() {
  if (done_) return;
  std::vector<catalog::Catalog::TableChange> changes;
  for (const auto& [oid, p] : tables_) {
    // base == working: locked (FOR UPDATE) but not written; nothing to publish.
    if ((p.base || p.working) && p.base != p.working) changes.push_back({p.base, p.working});
  }
  try {
    std::vector<std::string> files, directories;
    sync_targets(files, directories);
    const bool creations_only = !changes.empty() && std::all_of(changes.begin(), changes.end(), [](const auto& c) {
      return c.before == nullptr && c.after != nullptr;
    });
    if (creations_only && small_files(files)) {
      // One round: the files synced while SQLite commits.
      const std::unique_ptr<IoTasks> syncing = start_sync_all(files, directories);
      store_.catalog().commit_changes(changes, [&] {
        syncing->wait();
        statement_timeline().stamp(StatementTimeline::files_synced);
      });
    } else {
      // Durable files first: the catalog commit is what makes them live.
      sync_all(files, directories);
      statement_timeline().stamp(StatementTimeline::files_synced);
      if (!changes.empty()) store_.catalog().commit_changes(changes);
    }
  } catch (...) {
    rollback();
    throw;
  }
  done_ = true;
  // Committed: what the block replaced is garbage now. Its own replaced
  // chunks were never visible to anyone else; committed ones may still be
  // read through older snapshots, so they are retired.
  for (auto& [oid, p] : tables_) {
    if (!p.working) {
      if (p.base) {
        store_.forget_table(oid, p.base);
      } else {
        std::error_code ec;
        fs::remove_all(store_.table_dir(oid), ec);
      }
      continue;
    }
    publish_dictionaries(p);
    if (const auto committed = store_.catalog().find_table(oid))
      for (auto& [chunk_id, batch] : p.written)
        if (has_chunk(*committed, chunk_id)) store_.cache_written(*committed, chunk_id, std::move(batch));
    remove_own_files(oid, p, /*keep_live=*/true);
    if (p.base) {
      std::vector<uint64_t> gone;
      for (const auto& c : p.base->chunks)
        if (!has_chunk(*p.working, c.chunk_id)) gone.push_back(c.chunk_id);
      store_.retire_chunks(p.base, gone);
    }
  }
  release_locks();
}

void WriteTransaction::rollback() {
  if (done_) return;
  done_ = true;
  for (auto& [oid, p] : tables_) {
    if (!p.base) {
      store_.cache_.evict_table(oid);
      std::error_code ec;
      fs::remove_all(store_.table_dir(oid), ec);
      continue;
    }
    remove_own_files(oid, p, /*keep_live=*/false);
    store_.reset_dictionaries(*p.base);
  }
  release_locks();
}

}  // namespace tally::storage
