#include "catalog/sequence_store.hpp"

#include <sqlite3.h>

#include <algorithm>

#include "catalog/catalog.hpp"
#include "catalog/sqlite_run.hpp"
#include "common/error.hpp"

namespace tally::catalog {
namespace {

constexpr const char* kWhat = "catalog sequences";

void run(sqlite3* db, const char* sql, const std::vector<SqliteParam>& params,
         const std::function<void(sqlite3_stmt*)>& each_row = {}) {
  sqlite_run(db, kWhat, sql, params, each_row);
}

}  // namespace

SequenceStore::SequenceStore(Catalog& catalog) : catalog_(catalog) {
  std::lock_guard lock(catalog_.mutex());
  sqlite3* db = catalog_.handle();
  run(db, R"sql(CREATE TABLE IF NOT EXISTS tally_sequences(
        oid INTEGER PRIMARY KEY, schema_name TEXT NOT NULL, name TEXT NOT NULL, type_oid INTEGER NOT NULL,
        start INTEGER NOT NULL, increment INTEGER NOT NULL, min INTEGER NOT NULL, max INTEGER NOT NULL,
        cache INTEGER NOT NULL, cycle INTEGER NOT NULL, owner_table INTEGER NOT NULL, owner_column INTEGER NOT NULL,
        last_value INTEGER NOT NULL, is_called INTEGER NOT NULL))sql",
      {});
  run(db,
      "SELECT oid, schema_name, name, type_oid, start, increment, min, max, cache, cycle, owner_table, owner_column, "
      "last_value, is_called FROM tally_sequences",
      {}, [&](sqlite3_stmt* s) {
        Entry e;
        e.def.oid = static_cast<uint32_t>(sqlite3_column_int64(s, 0));
        e.def.schema = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
        e.def.name = reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
        e.def.type = type_from_oid(static_cast<uint32_t>(sqlite3_column_int64(s, 3))).value_or(TypeId::int8);
        e.def.start = sqlite3_column_int64(s, 4);
        e.def.increment = sqlite3_column_int64(s, 5);
        e.def.min = sqlite3_column_int64(s, 6);
        e.def.max = sqlite3_column_int64(s, 7);
        e.def.cache = sqlite3_column_int64(s, 8);
        e.def.cycle = sqlite3_column_int64(s, 9) != 0;
        e.def.owner_table = static_cast<uint32_t>(sqlite3_column_int64(s, 10));
        e.def.owner_column = static_cast<int>(sqlite3_column_int64(s, 11));
        // What was written is at or past every value handed out before a crash.
        e.value = {sqlite3_column_int64(s, 12), sqlite3_column_int64(s, 13) != 0};
        e.logged = e.value.last_value;
        entries_[e.def.oid] = std::move(e);
      });
}

std::optional<SequenceDef> SequenceStore::find(std::string_view name, std::string_view schema) const {
  std::lock_guard lock(mutex_);
  for (const auto& [oid, e] : entries_)
    if (e.def.name == name && e.def.schema == schema) return e.def;
  return std::nullopt;
}

std::optional<SequenceDef> SequenceStore::find(uint32_t oid) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(oid);
  if (it == entries_.end()) return std::nullopt;
  return it->second.def;
}

std::vector<SequenceDef> SequenceStore::list() const {
  std::vector<SequenceDef> out;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [oid, e] : entries_) out.push_back(e.def);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

SequenceValue SequenceStore::value(uint32_t oid) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(oid);
  return it == entries_.end() ? SequenceValue{} : it->second.value;
}

void SequenceStore::write(const Entry& entry, int64_t last_value, bool is_called) {
  std::lock_guard lock(catalog_.mutex());
  const SequenceDef& d = entry.def;
  run(catalog_.handle(),
      "INSERT OR REPLACE INTO tally_sequences(oid, schema_name, name, type_oid, start, increment, min, max, cache, "
      "cycle, owner_table, owner_column, last_value, is_called) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {int64_t{d.oid}, d.schema, d.name, int64_t{type_oid(d.type)}, d.start, d.increment, d.min, d.max, d.cache,
       int64_t{d.cycle}, int64_t{d.owner_table}, int64_t{d.owner_column}, last_value, int64_t{is_called}});
}

SequenceDef SequenceStore::create(SequenceDef def) {
  def.oid = catalog_.reserve_oid();
  Entry e;
  e.def = std::move(def);
  e.value = {e.def.start, false};
  std::lock_guard lock(mutex_);
  write(e, e.value.last_value, false);
  e.logged = e.value.last_value;
  // The oid must not be handed out again after a restart (the catalog
  // writes its next oid only when it commits a table).
  {
    std::lock_guard catalog_lock(catalog_.mutex());
    sqlite_keep_oid(catalog_.handle(), kWhat, e.def.oid + 1);
  }
  entries_[e.def.oid] = e;
  return e.def;
}

void SequenceStore::drop(uint32_t oid) {
  std::lock_guard lock(mutex_);
  {
    std::lock_guard catalog_lock(catalog_.mutex());
    run(catalog_.handle(), "DELETE FROM tally_sequences WHERE oid = ?", {int64_t{oid}});
  }
  entries_.erase(oid);
}

int64_t SequenceStore::next(uint32_t oid) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(oid);
  if (it == entries_.end()) throw Error(SqlState::undefined_table, "could not open relation with OID " + std::to_string(oid));
  Entry& e = it->second;
  const SequenceDef& d = e.def;
  __int128 v = e.value.is_called ? static_cast<__int128>(e.value.last_value) + d.increment : e.value.last_value;
  if (v > d.max || v < d.min) {
    if (!d.cycle) {
      const bool up = d.increment > 0;
      throw Error(SqlState::sequence_generator_limit_exceeded,
                  "nextval: reached " + std::string(up ? "maximum" : "minimum") + " value of sequence \"" + d.name +
                      "\" (" + std::to_string(up ? d.max : d.min) + ")");
    }
    v = d.increment > 0 ? d.min : d.max;
  }
  const auto value = static_cast<int64_t>(v);
  const bool past_logged = d.increment > 0 ? value > e.logged || !e.value.is_called : value < e.logged || !e.value.is_called;
  if (past_logged) {
    __int128 ahead = static_cast<__int128>(value) + static_cast<__int128>(d.increment) * log_ahead;
    ahead = std::clamp<__int128>(ahead, d.min, d.max);
    write(e, static_cast<int64_t>(ahead), true);
    e.logged = static_cast<int64_t>(ahead);
  }
  e.value = {value, true};
  return value;
}

void SequenceStore::set_owner_column(uint32_t oid, int column) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(oid);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.def.owner_column = column;
  write(e, e.logged, e.value.is_called);
}

void SequenceStore::set(uint32_t oid, int64_t value, bool is_called) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(oid);
  if (it == entries_.end()) throw Error(SqlState::undefined_table, "could not open relation with OID " + std::to_string(oid));
  Entry& e = it->second;
  write(e, value, is_called);
  e.logged = value;
  e.value = {value, is_called};
}

}  // namespace tally::catalog
