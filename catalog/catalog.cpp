#include "catalog/catalog.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/error.hpp"

namespace tally::catalog {
namespace {

// Bumped when the catalog schema changes incompatibly.
constexpr int catalog_format_version = 1;

[[noreturn]] void sqlite_fail(sqlite3* db, std::string_view what) {
  throw Error(SqlState::io_error, std::string("catalog ") + std::string(what) + ": " +
                                      (db ? sqlite3_errmsg(db) : "cannot allocate sqlite handle"));
}

// The prepared statements of each connection not in use, by SQL text: a
// small DDL or append runs a dozen statements, and parsing them again each
// time cost about as much as running them. Finalized before the connection
// closes (forget_statements).
std::mutex idle_mutex;
std::unordered_map<sqlite3*, std::unordered_multimap<std::string, sqlite3_stmt*>> idle_statements;

sqlite3_stmt* take_statement(sqlite3* db, const char* sql) {
  {
    std::lock_guard lock(idle_mutex);
    auto& idle = idle_statements[db];
    if (auto it = idle.find(sql); it != idle.end()) {
      sqlite3_stmt* stmt = it->second;
      idle.erase(it);
      return stmt;
    }
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    sqlite_fail(db, "prepare");
  }
  return stmt;
}

void give_back_statement(sqlite3* db, sqlite3_stmt* stmt) {
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  std::lock_guard lock(idle_mutex);
  idle_statements[db].emplace(sqlite3_sql(stmt), stmt);
}

void forget_statements(sqlite3* db) {
  std::lock_guard lock(idle_mutex);
  auto it = idle_statements.find(db);
  if (it == idle_statements.end()) return;
  for (auto& [sql, stmt] : it->second) sqlite3_finalize(stmt);
  idle_statements.erase(it);
}

// One prepared statement (kept prepared for the next use of its SQL), reset on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db), stmt_(take_statement(db, sql)) {}
  ~Statement() { give_back_statement(db_, stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, int64_t v) { check(sqlite3_bind_int64(stmt_, i, v)); return *this; }
  Statement& bind(int i, double v) { check(sqlite3_bind_double(stmt_, i, v)); return *this; }
  Statement& bind(int i, std::string_view v) {
    check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& bind_blob(int i, const std::vector<uint8_t>& v) {
    check(sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& bind_null(int i) { check(sqlite3_bind_null(stmt_, i)); return *this; }
  // True while a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite_fail(db_, "step");
  }
  void run() {
    step();
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t int_at(int i) const { return sqlite3_column_int64(stmt_, i); }
  double double_at(int i) const { return sqlite3_column_double(stmt_, i); }
  bool null_at(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  std::string text_at(int i) const {
    const auto* p = sqlite3_column_text(stmt_, i);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, i)))
             : std::string();
  }
  std::vector<uint8_t> blob_at(int i) const {
    const auto* p = static_cast<const uint8_t*>(sqlite3_column_blob(stmt_, i));
    return p ? std::vector<uint8_t>(p, p + sqlite3_column_bytes(stmt_, i)) : std::vector<uint8_t>();
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) sqlite_fail(db_, "bind");
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back when an exception leaves the scope.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {
    if (sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) != SQLITE_OK) sqlite_fail(db_, "begin");
  }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    if (sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) sqlite_fail(db_, "commit");
    done_ = true;
  }

 private:
  sqlite3* db_;
  bool done_ = false;
};

void insert_chunk_stats(sqlite3* db, uint32_t oid, const ChunkInfo& chunk);

void insert_chunk(sqlite3* db, uint32_t oid, const ChunkInfo& chunk) {
  Statement c(db, "INSERT INTO tally_chunks(table_oid, chunk_id, row_count, inlined) VALUES (?, ?, ?, ?)");
  c.bind(1, int64_t{oid}).bind(2, static_cast<int64_t>(chunk.chunk_id)).bind(3, static_cast<int64_t>(chunk.rows));
  c.bind(4, int64_t{chunk.inlined});
  c.run();
  insert_chunk_stats(db, oid, chunk);
}

// The stored bytes of the inlined chunks among `chunks`.
void insert_chunk_bytes(sqlite3* db, const TableDef& def, const std::vector<ChunkInfo>& chunks) {
  Statement b(db, "INSERT INTO tally_chunk_bytes(table_oid, chunk_id, slot, bytes) VALUES (?, ?, ?, ?)");
  for (const ChunkInfo& chunk : chunks) {
    if (!chunk.inlined) continue;
    if (!chunk.stored)
      throw Error(SqlState::internal_error, "catalog: inlined chunk " + std::to_string(chunk.chunk_id) + " of table \"" +
                                                def.name + "\" has no stored bytes");
    // Only the definition's columns: a block may have dropped one since.
    for (const auto& [slot, bytes] : *chunk.stored) {
      bool live = false;
      for (size_t c = 0; c < def.columns.size() && !live; ++c) live = def.slot(c) == slot;
      if (!live) continue;
      b.bind(1, int64_t{def.oid}).bind(2, static_cast<int64_t>(chunk.chunk_id)).bind(3, int64_t{slot});
      b.bind_blob(4, bytes);
      b.run();
    }
  }
}

// The chunk as committed snapshots list it: its stored bytes are the catalog's.
ChunkInfo committed_chunk(ChunkInfo chunk) {
  chunk.stored.reset();
  return chunk;
}

void insert_chunk_stats(sqlite3* db, uint32_t oid, const ChunkInfo& chunk) {
  Statement s(db,
              "INSERT INTO tally_chunk_stats(table_oid, chunk_id, attnum, null_count, has_min_max, "
              "min_int, max_int, min_float, max_float, hll) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t a = 0; a < chunk.stats.size(); ++a) {
    const ColumnStats& st = chunk.stats[a];
    s.bind(1, int64_t{oid}).bind(2, static_cast<int64_t>(chunk.chunk_id)).bind(3, static_cast<int64_t>(a));
    s.bind(4, static_cast<int64_t>(st.null_count)).bind(5, int64_t{st.has_min_max});
    s.bind(6, st.min_int).bind(7, st.max_int).bind(8, st.min_float).bind(9, st.max_float);
    s.bind_blob(10, st.hll);
    s.run();
  }
}

void write_dictionaries(sqlite3* db, uint32_t oid, const std::vector<DictionaryState>& dicts) {
  Statement d(db,
              "INSERT OR REPLACE INTO tally_dictionaries(table_oid, attnum, entries, bytes, crc) "
              "VALUES (?, ?, ?, ?, ?)");
  for (size_t a = 0; a < dicts.size(); ++a) {
    d.bind(1, int64_t{oid}).bind(2, static_cast<int64_t>(a)).bind(3, static_cast<int64_t>(dicts[a].entries));
    d.bind(4, static_cast<int64_t>(dicts[a].bytes)).bind(5, static_cast<int64_t>(dicts[a].crc));
    d.run();
  }
}

// Keys as "p"/"u" (constraints) or "i"/"x" (unique / plain indexes), columns as "0,2".
void insert_keys(sqlite3* db, const TableDef& def) {
  Statement k(db,
              "INSERT INTO tally_keys(table_oid, position, name, kind, columns, oid, index_oid) "
              "VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (size_t i = 0; i < def.keys.size(); ++i) {
    const KeyConstraint& key = def.keys[i];
    std::string columns;
    for (const int c : key.columns) columns += (columns.empty() ? "" : ",") + std::to_string(c);
    const char* kind = key.constraint ? (key.primary ? "p" : "u") : (key.unique ? "i" : "x");
    k.bind(1, int64_t{def.oid}).bind(2, static_cast<int64_t>(i)).bind(3, key.name).bind(4, std::string_view(kind));
    k.bind(5, columns).bind(6, int64_t{key.oid}).bind(7, int64_t{key.index_oid});
    k.run();
  }
}

// The columns and keys of a table (its tally_tables row is the caller's).
void insert_columns_and_keys(sqlite3* db, const TableDef& def) {
  Statement c(db,
              "INSERT INTO tally_columns(table_oid, attnum, name, type_oid, typmod, not_null, default_expr, identity, "
              "slot, first_chunk, missing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (size_t a = 0; a < def.columns.size(); ++a) {
    const ColumnDef& col = def.columns[a];
    c.bind(1, int64_t{def.oid}).bind(2, static_cast<int64_t>(a)).bind(3, col.name);
    c.bind(4, int64_t{type_oid(col.type.id)}).bind(5, int64_t{col.type.typmod}).bind(6, int64_t{col.not_null});
    c.bind(7, col.default_expr).bind(8, col.identity ? std::string(1, col.identity) : std::string());
    c.bind(9, int64_t{def.slot(a)}).bind(10, static_cast<int64_t>(col.first_chunk));
    if (col.missing) c.bind_blob(11, std::vector<uint8_t>(col.missing->begin(), col.missing->end()));
    else c.bind_null(11);
    c.run();
  }
  Statement n(db, "UPDATE tally_tables SET next_slot = ? WHERE oid = ?");
  n.bind(1, int64_t{def.unused_slot()}).bind(2, int64_t{def.oid});
  n.run();
  insert_keys(db, def);
}

void insert_table_def(sqlite3* db, const TableDef& def) {
  Statement t(db, "INSERT INTO tally_tables(oid, schema_name, name) VALUES (?, ?, ?)");
  t.bind(1, int64_t{def.oid}).bind(2, def.schema).bind(3, def.name);
  t.run();
  insert_columns_and_keys(db, def);
}

void write_next_oid(sqlite3* db, uint32_t next_oid) {
  Statement n(db, "UPDATE tally_meta SET value = ? WHERE key = 'next_oid'");
  n.bind(1, int64_t{next_oid});
  n.run();
}

void delete_chunk(sqlite3* db, uint32_t oid, uint64_t chunk_id) {
  Statement d(db, "DELETE FROM tally_chunks WHERE table_oid = ? AND chunk_id = ?");
  d.bind(1, int64_t{oid}).bind(2, static_cast<int64_t>(chunk_id));
  d.run();
}

void write_table_version(sqlite3* db, const TableSnapshot& snap) {
  Statement v(db, "UPDATE tally_tables SET version = ?, next_chunk_id = ? WHERE oid = ?");
  v.bind(1, static_cast<int64_t>(snap.version)).bind(2, static_cast<int64_t>(snap.next_chunk_id));
  v.bind(3, int64_t{snap.def.oid});
  v.run();
}

// A definition's rows rewritten in place: name, columns and keys.
void replace_definition_rows(sqlite3* db, const TableDef& def) {
  for (const char* sql : {"DELETE FROM tally_columns WHERE table_oid = ?", "DELETE FROM tally_keys WHERE table_oid = ?"}) {
    Statement d(db, sql);
    d.bind(1, int64_t{def.oid});
    d.run();
  }
  Statement t(db, "UPDATE tally_tables SET schema_name = ?, name = ? WHERE oid = ?");
  t.bind(1, def.schema).bind(2, def.name).bind(3, int64_t{def.oid});
  t.run();
  insert_columns_and_keys(db, def);
}

bool same_definition(const TableDef& a, const TableDef& b) {
  if (a.name != b.name || a.schema != b.schema || a.columns.size() != b.columns.size() || a.keys.size() != b.keys.size())
    return false;
  for (size_t i = 0; i < a.columns.size(); ++i) {
    if (a.columns[i].name != b.columns[i].name || a.columns[i].not_null != b.columns[i].not_null ||
        a.columns[i].default_expr != b.columns[i].default_expr || a.columns[i].identity != b.columns[i].identity)
      return false;
  }
  for (size_t i = 0; i < a.keys.size(); ++i) {
    if (a.keys[i].name != b.keys[i].name || a.keys[i].columns != b.keys[i].columns || a.keys[i].oid != b.keys[i].oid)
      return false;
  }
  return true;
}

Error duplicate_table(std::string_view name) {
  return Error(SqlState::duplicate_table, "relation \"" + std::string(name) + "\" already exists");
}

}  // namespace

Catalog::Catalog(const std::string& data_dir) : data_dir_(data_dir) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir_, ec);
  if (ec) throw Error(SqlState::io_error, "could not create data directory \"" + data_dir_ + "\": " + ec.message());
  if (sqlite3_open_v2(database_path().c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(SqlState::io_error, "could not open catalog \"" + database_path() + "\": " + msg);
  }
  sqlite3_busy_timeout(db_, 10000);
  try {
    // WAL lets the tuning cache's writes and ours share the file; FULL makes a
    // commit durable when it returns (the append protocol relies on that).
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=FULL");
    exec("PRAGMA foreign_keys=ON");
    create_schema();
    load();
  } catch (...) {
    forget_statements(db_);
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Catalog::~Catalog() {
  if (!db_) return;
  forget_statements(db_);
  sqlite3_close(db_);
}

std::string Catalog::database_path() const { return data_dir_ + "/catalog.sqlite3"; }

void Catalog::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw Error(SqlState::io_error, "catalog: " + msg);
  }
}

void Catalog::create_schema() {
  exec(R"sql(
    CREATE TABLE IF NOT EXISTS tally_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS tally_tables(
      oid INTEGER PRIMARY KEY, schema_name TEXT NOT NULL, name TEXT NOT NULL,
      next_chunk_id INTEGER NOT NULL DEFAULT 1, version INTEGER NOT NULL DEFAULT 0,
      UNIQUE(schema_name, name));
    CREATE TABLE IF NOT EXISTS tally_columns(
      table_oid INTEGER NOT NULL REFERENCES tally_tables(oid) ON DELETE CASCADE,
      attnum INTEGER NOT NULL, name TEXT NOT NULL, type_oid INTEGER NOT NULL,
      typmod INTEGER NOT NULL, not_null INTEGER NOT NULL, PRIMARY KEY(table_oid, attnum));
    CREATE TABLE IF NOT EXISTS tally_chunks(
      table_oid INTEGER NOT NULL REFERENCES tally_tables(oid) ON DELETE CASCADE,
      chunk_id INTEGER NOT NULL, row_count INTEGER NOT NULL, PRIMARY KEY(table_oid, chunk_id));
    CREATE TABLE IF NOT EXISTS tally_chunk_stats(
      table_oid INTEGER NOT NULL, chunk_id INTEGER NOT NULL, attnum INTEGER NOT NULL,
      null_count INTEGER NOT NULL, has_min_max INTEGER NOT NULL,
      min_int INTEGER, max_int INTEGER, min_float REAL, max_float REAL, hll BLOB,
      PRIMARY KEY(table_oid, chunk_id, attnum),
      FOREIGN KEY(table_oid, chunk_id) REFERENCES tally_chunks(table_oid, chunk_id) ON DELETE CASCADE);
    CREATE TABLE IF NOT EXISTS tally_keys(
      table_oid INTEGER NOT NULL REFERENCES tally_tables(oid) ON DELETE CASCADE,
      position INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, columns TEXT NOT NULL,
      oid INTEGER NOT NULL, index_oid INTEGER NOT NULL, PRIMARY KEY(table_oid, position));
    CREATE TABLE IF NOT EXISTS tally_chunk_bytes(
      table_oid INTEGER NOT NULL, chunk_id INTEGER NOT NULL, slot INTEGER NOT NULL, bytes BLOB NOT NULL,
      PRIMARY KEY(table_oid, chunk_id, slot));
    CREATE TABLE IF NOT EXISTS tally_dictionaries(
      table_oid INTEGER NOT NULL REFERENCES tally_tables(oid) ON DELETE CASCADE,
      attnum INTEGER NOT NULL, entries INTEGER NOT NULL, bytes INTEGER NOT NULL, crc INTEGER NOT NULL,
      PRIMARY KEY(table_oid, attnum));
  )sql");
  // Columns added to tally_columns after format 1 was first written: a
  // catalog from before them gets them with their empty defaults.
  auto has_column = [this](const char* table, const char* column) {
    const std::string sql = std::string("SELECT 1 FROM pragma_table_info('") + table + "') WHERE name = '" + column + "'";
    Statement q(db_, sql.c_str());
    return q.step();
  };
  if (!has_column("tally_columns", "default_expr")) {
    exec("ALTER TABLE tally_columns ADD COLUMN default_expr TEXT NOT NULL DEFAULT ''");
    exec("ALTER TABLE tally_columns ADD COLUMN identity TEXT NOT NULL DEFAULT ''");
  }
  // Likewise the file slots and missing values of ADD/DROP COLUMN (-1: the
  // column's index, which is where every column of an older catalog is).
  if (!has_column("tally_columns", "slot")) {
    exec("ALTER TABLE tally_columns ADD COLUMN slot INTEGER NOT NULL DEFAULT -1");
    exec("ALTER TABLE tally_columns ADD COLUMN first_chunk INTEGER NOT NULL DEFAULT 0");
    exec("ALTER TABLE tally_columns ADD COLUMN missing BLOB");
    exec("ALTER TABLE tally_tables ADD COLUMN next_slot INTEGER NOT NULL DEFAULT 0");
  }
  // 1: created by a one-round commit whose files may not have been synced
  // before a crash (commit_changes); TableStore::recover checks them.
  if (!has_column("tally_tables", "unsynced"))
    exec("ALTER TABLE tally_tables ADD COLUMN unsynced INTEGER NOT NULL DEFAULT 0");
  // 1: the chunk's bytes are in tally_chunk_bytes (ChunkInfo::inlined).
  if (!has_column("tally_chunks", "inlined"))
    exec("ALTER TABLE tally_chunks ADD COLUMN inlined INTEGER NOT NULL DEFAULT 0");
  Statement version(db_, "SELECT value FROM tally_meta WHERE key = 'format_version'");
  if (version.step()) {
    if (version.int_at(0) != catalog_format_version)
      throw Error(SqlState::io_error, "catalog format version " + std::to_string(version.int_at(0)) +
                                          " is not supported (expected " + std::to_string(catalog_format_version) + ")");
  } else {
    Statement ins(db_, "INSERT INTO tally_meta(key, value) VALUES ('format_version', ?), ('next_oid', 16384)");
    ins.bind(1, int64_t{catalog_format_version});
    ins.run();
  }
}

void Catalog::load() {
  Statement next(db_, "SELECT value FROM tally_meta WHERE key = 'next_oid'");
  if (next.step()) next_oid_ = static_cast<uint32_t>(next.int_at(0));
  std::unordered_map<uint32_t, std::shared_ptr<TableSnapshot>> tables;
  Statement t(db_, "SELECT oid, schema_name, name, next_chunk_id, version, next_slot, unsynced FROM tally_tables");
  while (t.step()) {
    auto snap = std::make_shared<TableSnapshot>();
    snap->def.oid = static_cast<uint32_t>(t.int_at(0));
    snap->def.schema = t.text_at(1);
    snap->def.name = t.text_at(2);
    snap->next_chunk_id = static_cast<uint64_t>(t.int_at(3));
    snap->version = static_cast<uint64_t>(t.int_at(4));
    snap->def.next_slot = static_cast<int32_t>(t.int_at(5));
    if (t.int_at(6) != 0) unsynced_.push_back(snap->def.oid);
    tables[snap->def.oid] = snap;
  }
  Statement c(db_,
              "SELECT table_oid, name, type_oid, typmod, not_null, default_expr, identity, slot, first_chunk, missing "
              "FROM tally_columns ORDER BY table_oid, attnum");
  while (c.step()) {
    auto it = tables.find(static_cast<uint32_t>(c.int_at(0)));
    if (it == tables.end()) continue;
    const auto type = type_from_oid(static_cast<uint32_t>(c.int_at(2)));
    if (!type) throw Error(SqlState::data_corrupted, "catalog: unknown type oid " + std::to_string(c.int_at(2)));
    const std::string identity = c.text_at(6);
    ColumnDef& added = it->second->def.columns.emplace_back();
    added.name = c.text_at(1);
    added.type = SqlType{*type, static_cast<int32_t>(c.int_at(3))};
    added.not_null = c.int_at(4) != 0;
    added.default_expr = c.text_at(5);
    added.identity = identity.empty() ? '\0' : identity[0];
    added.slot = static_cast<int32_t>(c.int_at(7));
    added.first_chunk = static_cast<uint64_t>(c.int_at(8));
    if (!c.null_at(9)) {
      const std::vector<uint8_t> bytes = c.blob_at(9);
      added.missing = std::string(bytes.begin(), bytes.end());
    }
  }
  Statement k(db_, "SELECT table_oid, name, kind, columns, oid, index_oid FROM tally_keys ORDER BY table_oid, position");
  while (k.step()) {
    auto it = tables.find(static_cast<uint32_t>(k.int_at(0)));
    if (it == tables.end()) continue;
    KeyConstraint key;
    key.name = k.text_at(1);
    const std::string kind = k.text_at(2);
    key.primary = kind == "p";
    key.constraint = kind == "p" || kind == "u";
    key.unique = kind != "x";
    const std::string columns = k.text_at(3);
    for (size_t pos = 0; pos < columns.size();) {
      const size_t comma = std::min(columns.find(',', pos), columns.size());
      key.columns.push_back(std::stoi(columns.substr(pos, comma - pos)));
      pos = comma + 1;
    }
    key.oid = static_cast<uint32_t>(k.int_at(4));
    key.index_oid = static_cast<uint32_t>(k.int_at(5));
    it->second->def.keys.push_back(std::move(key));
  }
  for (auto& [oid, snap] : tables) {
    snap->dictionaries.assign(snap->def.columns.size(), DictionaryState{});
  }
  Statement ch(db_, "SELECT table_oid, chunk_id, row_count, inlined FROM tally_chunks ORDER BY table_oid, chunk_id");
  while (ch.step()) {
    auto it = tables.find(static_cast<uint32_t>(ch.int_at(0)));
    if (it == tables.end()) continue;
    ChunkInfo info;
    info.chunk_id = static_cast<uint64_t>(ch.int_at(1));
    info.rows = static_cast<uint64_t>(ch.int_at(2));
    info.inlined = ch.int_at(3) != 0;
    info.stats.resize(it->second->def.columns.size());
    it->second->chunks.push_back(std::move(info));
  }
  Statement st(db_,
               "SELECT table_oid, chunk_id, attnum, null_count, has_min_max, min_int, max_int, min_float, max_float, hll "
               "FROM tally_chunk_stats ORDER BY table_oid, chunk_id, attnum");
  while (st.step()) {
    auto it = tables.find(static_cast<uint32_t>(st.int_at(0)));
    if (it == tables.end()) continue;
    auto& chunks = it->second->chunks;
    const auto id = static_cast<uint64_t>(st.int_at(1));
    auto c2 = std::lower_bound(chunks.begin(), chunks.end(), id,
                               [](const ChunkInfo& a, uint64_t b) { return a.chunk_id < b; });
    const auto attnum = static_cast<size_t>(st.int_at(2));
    if (c2 == chunks.end() || c2->chunk_id != id || attnum >= c2->stats.size()) continue;
    ColumnStats& s = c2->stats[attnum];
    s.null_count = static_cast<uint64_t>(st.int_at(3));
    s.has_min_max = st.int_at(4) != 0;
    s.min_int = st.int_at(5);
    s.max_int = st.int_at(6);
    s.min_float = st.double_at(7);
    s.max_float = st.double_at(8);
    s.hll = st.blob_at(9);
  }
  Statement d(db_, "SELECT table_oid, attnum, entries, bytes, crc FROM tally_dictionaries");
  while (d.step()) {
    auto it = tables.find(static_cast<uint32_t>(d.int_at(0)));
    const auto attnum = static_cast<size_t>(d.int_at(1));
    if (it == tables.end() || attnum >= it->second->dictionaries.size()) continue;
    it->second->dictionaries[attnum] = {static_cast<uint64_t>(d.int_at(2)), static_cast<uint64_t>(d.int_at(3)),
                                        static_cast<uint32_t>(d.int_at(4))};
  }
  for (auto& [oid, snap] : tables) by_oid_[oid] = snap;
}

void Catalog::publish(std::shared_ptr<const TableSnapshot> snapshot) { by_oid_[snapshot->def.oid] = std::move(snapshot); }

bool Catalog::being_created(std::string_view schema, std::string_view name) const {
  return std::any_of(creating_.begin(), creating_.end(),
                     [&](const auto& taken) { return taken.first == schema && taken.second == name; });
}

bool Catalog::name_taken(std::string_view schema, std::string_view name) const {
  for (const auto& [oid, snap] : by_oid_)
    if (snap->def.name == name && snap->def.schema == schema) return true;
  return being_created(schema, name);
}

std::vector<uint32_t> Catalog::unsynced_tables() const {
  std::lock_guard lock(mutex_);
  return unsynced_;
}

void Catalog::mark_synced(uint32_t oid) {
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  Statement u(db_, "UPDATE tally_tables SET unsynced = 0 WHERE oid = ?");
  u.bind(1, int64_t{oid});
  u.run();
  tx.commit();
  unsynced_.erase(std::remove(unsynced_.begin(), unsynced_.end(), oid), unsynced_.end());
}

std::shared_ptr<const TableSnapshot> Catalog::find_table(std::string_view name, std::string_view schema) const {
  std::lock_guard lock(mutex_);
  for (const auto& [oid, snap] : by_oid_)
    if (snap->def.name == name && snap->def.schema == schema) return snap;
  return nullptr;
}

std::shared_ptr<const TableSnapshot> Catalog::find_table(uint32_t oid) const {
  std::lock_guard lock(mutex_);
  auto it = by_oid_.find(oid);
  return it == by_oid_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const TableSnapshot>> Catalog::tables() const {
  std::vector<std::shared_ptr<const TableSnapshot>> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [oid, snap] : by_oid_) out.push_back(snap);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a->def.schema, a->def.name) < std::tie(b->def.schema, b->def.name);
  });
  return out;
}

std::shared_ptr<const TableSnapshot> Catalog::create_table(TableDef def, bool if_not_exists) {
  std::lock_guard lock(mutex_);
  if (name_taken(def.schema, def.name)) {
    if (if_not_exists) return nullptr;
    throw duplicate_table(def.name);
  }
  uint32_t next = next_oid_;
  if (def.oid == 0) def.oid = next++;  // else reserved (reserve_oid) by the caller
  for (KeyConstraint& key : def.keys) {
    key.oid = next++;
    key.index_oid = next++;
  }
  Transaction tx(db_);
  insert_table_def(db_, def);
  write_next_oid(db_, next);
  tx.commit();
  next_oid_ = next;
  auto snap = std::make_shared<TableSnapshot>();
  snap->dictionaries.assign(def.columns.size(), DictionaryState{});
  snap->def = std::move(def);
  publish(snap);
  return snap;
}

bool Catalog::drop_table(uint32_t oid) {
  std::lock_guard lock(mutex_);
  auto it = by_oid_.find(oid);
  if (it == by_oid_.end()) return false;
  Transaction tx(db_);
  Statement d(db_, "DELETE FROM tally_tables WHERE oid = ?");
  d.bind(1, int64_t{oid});
  d.run();
  tx.commit();
  by_oid_.erase(it);
  unsynced_.erase(std::remove(unsynced_.begin(), unsynced_.end(), oid), unsynced_.end());
  return true;
}

std::shared_ptr<const TableSnapshot> Catalog::truncate_table(uint32_t oid) {
  std::lock_guard lock(mutex_);
  auto it = by_oid_.find(oid);
  if (it == by_oid_.end()) return nullptr;
  auto snap = std::make_shared<TableSnapshot>(*it->second);
  snap->chunks.clear();
  snap->dictionaries.assign(snap->def.columns.size(), DictionaryState{});
  ++snap->version;
  Transaction tx(db_);
  Statement d(db_, "DELETE FROM tally_chunks WHERE table_oid = ?");
  d.bind(1, int64_t{oid});
  d.run();
  Statement dd(db_, "DELETE FROM tally_dictionaries WHERE table_oid = ?");
  dd.bind(1, int64_t{oid});
  dd.run();
  Statement v(db_, "UPDATE tally_tables SET version = ? WHERE oid = ?");
  v.bind(1, static_cast<int64_t>(snap->version)).bind(2, int64_t{oid});
  v.run();
  tx.commit();
  publish(snap);
  return snap;
}

std::shared_ptr<const TableSnapshot> Catalog::commit_append(uint32_t oid, const std::vector<ChunkInfo>& new_chunks,
                                                            const std::vector<uint64_t>& replaced_chunk_ids,
                                                            const std::vector<DictionaryState>& dictionaries,
                                                            uint64_t next_chunk_id) {
  std::lock_guard lock(mutex_);
  auto it = by_oid_.find(oid);
  if (it == by_oid_.end())
    throw Error(SqlState::undefined_table, "relation with OID " + std::to_string(oid) + " does not exist");
  auto snap = std::make_shared<TableSnapshot>(*it->second);
  ++snap->version;
  snap->next_chunk_id = std::max(snap->next_chunk_id, next_chunk_id);
  Transaction tx(db_);
  for (const uint64_t id : replaced_chunk_ids) {
    delete_chunk(db_, oid, id);
    std::erase_if(snap->chunks, [id](const ChunkInfo& c) { return c.chunk_id == id; });
  }
  for (const ChunkInfo& chunk : new_chunks) {
    insert_chunk(db_, oid, chunk);
    snap->chunks.push_back(committed_chunk(chunk));
  }
  insert_chunk_bytes(db_, snap->def, new_chunks);
  write_dictionaries(db_, oid, dictionaries);
  snap->dictionaries = dictionaries;
  write_table_version(db_, *snap);
  delete_forgotten_bytes();
  tx.commit();
  forgotten_bytes_.clear();
  publish(snap);
  return snap;
}

std::optional<std::vector<uint8_t>> Catalog::chunk_bytes(uint32_t oid, uint64_t chunk_id, int slot) const {
  std::lock_guard lock(mutex_);
  Statement q(db_, "SELECT bytes FROM tally_chunk_bytes WHERE table_oid = ? AND chunk_id = ? AND slot = ?");
  q.bind(1, int64_t{oid}).bind(2, static_cast<int64_t>(chunk_id)).bind(3, int64_t{slot});
  if (!q.step()) return std::nullopt;
  return q.blob_at(0);
}

void Catalog::forget_chunk_bytes(std::vector<ChunkBytesKey> keys) {
  std::lock_guard lock(mutex_);
  forgotten_bytes_.insert(forgotten_bytes_.end(), keys.begin(), keys.end());
}

void Catalog::delete_forgotten_bytes() {
  if (forgotten_bytes_.empty()) return;
  Statement d(db_,
              "DELETE FROM tally_chunk_bytes WHERE table_oid = ?1 AND (?2 IS NULL OR chunk_id = ?2) "
              "AND (?3 IS NULL OR slot = ?3)");
  for (const ChunkBytesKey& key : forgotten_bytes_) {
    d.bind(1, int64_t{key.oid});
    if (key.chunk_id) d.bind(2, static_cast<int64_t>(*key.chunk_id));
    else d.bind_null(2);
    if (key.slot) d.bind(3, int64_t{*key.slot});
    else d.bind_null(3);
    d.run();
  }
}

size_t Catalog::delete_unreachable_chunk_bytes() {
  std::lock_guard lock(mutex_);
  Transaction tx(db_);
  // A column's slot is its attnum where the catalog predates slots (-1).
  exec(R"sql(
    DELETE FROM tally_chunk_bytes WHERE NOT EXISTS (
        SELECT 1 FROM tally_chunks c WHERE c.table_oid = tally_chunk_bytes.table_oid
                                       AND c.chunk_id = tally_chunk_bytes.chunk_id AND c.inlined = 1)
      OR NOT EXISTS (
        SELECT 1 FROM tally_columns k WHERE k.table_oid = tally_chunk_bytes.table_oid
                                        AND (CASE WHEN k.slot < 0 THEN k.attnum ELSE k.slot END) = tally_chunk_bytes.slot)
  )sql");
  const auto deleted = static_cast<size_t>(sqlite3_changes(db_));
  tx.commit();
  forgotten_bytes_.clear();
  return deleted;
}

std::shared_ptr<const TableSnapshot> Catalog::replace_definition(const TableDef& def, const ColumnLayout* layout) {
  std::lock_guard lock(mutex_);
  auto it = by_oid_.find(def.oid);
  if (it == by_oid_.end())
    throw Error(SqlState::undefined_table, "relation with OID " + std::to_string(def.oid) + " does not exist");
  if (!layout && def.columns.size() != it->second->def.columns.size())
    throw Error(SqlState::internal_error, "catalog: a definition change may not add or remove columns");
  for (const auto& [oid, snap] : by_oid_) {
    if (oid != def.oid && snap->def.name == def.name && snap->def.schema == def.schema) throw duplicate_table(def.name);
  }
  if (being_created(def.schema, def.name)) throw duplicate_table(def.name);
  auto snap = std::make_shared<TableSnapshot>(*it->second);
  snap->def = def;
  uint32_t next = next_oid_;
  for (KeyConstraint& key : snap->def.keys) {
    if (key.oid == 0) key.oid = next++;
    if (key.index_oid == 0) key.index_oid = next++;
  }
  ++snap->version;
  Transaction tx(db_);
  replace_definition_rows(db_, snap->def);
  if (layout) {
    snap->chunks = layout->chunks;
    snap->dictionaries = layout->dictionaries;
    for (const char* sql : {"DELETE FROM tally_chunk_stats WHERE table_oid = ?",
                            "DELETE FROM tally_dictionaries WHERE table_oid = ?"}) {
      Statement d(db_, sql);
      d.bind(1, int64_t{def.oid});
      d.run();
    }
    for (const ChunkInfo& chunk : snap->chunks) insert_chunk_stats(db_, def.oid, chunk);
    write_dictionaries(db_, def.oid, snap->dictionaries);
  }
  write_table_version(db_, *snap);
  write_next_oid(db_, next);
  tx.commit();
  next_oid_ = next;
  publish(snap);
  return snap;
}

uint32_t Catalog::reserve_oid() {
  std::lock_guard lock(mutex_);
  return next_oid_++;
}

void Catalog::commit_changes(const std::vector<TableChange>& changes, const std::function<void()>& files_synced) {
  std::unique_lock lock(mutex_);
  std::vector<std::shared_ptr<TableSnapshot>> published;
  std::vector<uint32_t> dropped;
  Transaction tx(db_);
  for (const TableChange& change : changes) {
    if (!change.before || change.after) continue;
    Statement d(db_, "DELETE FROM tally_tables WHERE oid = ?");
    d.bind(1, int64_t{change.before->def.oid});
    d.run();
    dropped.push_back(change.before->def.oid);
  }
  for (const TableChange& change : changes) {
    if (!change.after) continue;
    const TableSnapshot& after = *change.after;
    const uint32_t oid = after.def.oid;
    auto snap = std::make_shared<TableSnapshot>(after);
    for (ChunkInfo& chunk : snap->chunks) chunk = committed_chunk(std::move(chunk));
    if (!change.before) {
      for (const auto& [other, table] : by_oid_) {
        const bool gone = std::find(dropped.begin(), dropped.end(), other) != dropped.end();
        if (!gone && table->def.name == after.def.name && table->def.schema == after.def.schema)
          throw duplicate_table(after.def.name);
      }
      if (being_created(after.def.schema, after.def.name)) throw duplicate_table(after.def.name);
      snap->version = 1;
      insert_table_def(db_, after.def);
      if (files_synced) {
        Statement u(db_, "UPDATE tally_tables SET unsynced = 1 WHERE oid = ?");
        u.bind(1, int64_t{oid});
        u.run();
      }
      for (const ChunkInfo& chunk : after.chunks) insert_chunk(db_, oid, chunk);
      insert_chunk_bytes(db_, after.def, after.chunks);
    } else {
      // The block held the table's write lock since it read `before`, so the
      // committed list is still that one.
      auto committed = by_oid_.find(oid);
      if (committed == by_oid_.end())
        throw Error(SqlState::undefined_table, "relation with OID " + std::to_string(oid) + " does not exist");
      const auto& old_chunks = committed->second->chunks;
      auto has = [](const std::vector<ChunkInfo>& list, uint64_t id) {
        return std::any_of(list.begin(), list.end(), [id](const ChunkInfo& c) { return c.chunk_id == id; });
      };
      for (const ChunkInfo& c : old_chunks)
        if (!has(after.chunks, c.chunk_id)) delete_chunk(db_, oid, c.chunk_id);
      std::vector<ChunkInfo> added;
      for (const ChunkInfo& c : after.chunks)
        if (!has(old_chunks, c.chunk_id)) {
          insert_chunk(db_, oid, c);
          added.push_back(c);
        }
      insert_chunk_bytes(db_, after.def, added);
      snap->version = committed->second->version + 1;
      snap->next_chunk_id = std::max(snap->next_chunk_id, committed->second->next_chunk_id);
      if (!same_definition(committed->second->def, after.def)) replace_definition_rows(db_, after.def);
    }
    write_dictionaries(db_, oid, after.dictionaries);
    write_table_version(db_, *snap);
    published.push_back(std::move(snap));
  }
  write_next_oid(db_, next_oid_);
  // Earlier one-round commits' tables: published, so their files are synced.
  for (const uint32_t oid : synced_since_) {
    Statement u(db_, "UPDATE tally_tables SET unsynced = 0 WHERE oid = ?");
    u.bind(1, int64_t{oid});
    u.run();
  }
  delete_forgotten_bytes();
  tx.commit();
  synced_since_.clear();
  forgotten_bytes_.clear();
  if (files_synced) {
    for (const auto& snap : published) creating_.emplace_back(snap->def.schema, snap->def.name);
    auto release_names = [&] {
      for (const auto& snap : published) {
        const auto taken = std::find(creating_.begin(), creating_.end(), std::make_pair(snap->def.schema, snap->def.name));
        if (taken != creating_.end()) creating_.erase(taken);
      }
    };
    lock.unlock();
    try {
      files_synced();
    } catch (...) {
      lock.lock();
      release_names();
      // The creation did not happen: its rows go (were this to fail too,
      // the start-up check would find the files short and remove them).
      try {
        Transaction undo(db_);
        for (const auto& snap : published) {
          for (const char* sql : {"DELETE FROM tally_tables WHERE oid = ?", "DELETE FROM tally_chunk_bytes WHERE table_oid = ?"}) {
            Statement d(db_, sql);
            d.bind(1, int64_t{snap->def.oid});
            d.run();
          }
        }
        undo.commit();
      } catch (...) {
      }
      throw;
    }
    lock.lock();
    release_names();
    for (const auto& snap : published) synced_since_.push_back(snap->def.oid);
  }
  for (const uint32_t oid : dropped) by_oid_.erase(oid);
  for (auto& snap : published) publish(std::move(snap));
}

}  // namespace tally::catalog
