#include "catalog/tuning_cache.hpp"

#include <sqlite3.h>

#include "common/error.hpp"

namespace tally::catalog {

namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw Error(SqlState::io_error, "tuning cache: " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

// RAII prepared statement.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail(db, "prepare");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int i, const std::string& v) { check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT)); }
  void bind(int i, int64_t v) { check(sqlite3_bind_int64(stmt_, i, v)); }
  void bind(int i, double v) { check(sqlite3_bind_double(stmt_, i, v)); }
  // True while a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, "step");
  }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
  }
  int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) fail(db_, "bind");
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

constexpr const char* kColumns =
    "device, operator_signature, variant, cardinality_bucket, best_config, seconds_per_row, observations, source, "
    "search_state, updated_at";

TuningRecord read_row(const Statement& st) {
  TuningRecord r;
  r.device = st.text(0);
  r.signature = st.text(1);
  r.variant = st.text(2);
  r.bucket = static_cast<int>(st.int64(3));
  r.best_config = st.text(4);
  r.seconds_per_row = st.real(5);
  r.observations = st.int64(6);
  r.source = st.text(7);
  r.search_state = st.text(8);
  r.updated_at = st.text(9);
  return r;
}

}  // namespace

TuningCache::TuningCache(sqlite3* db) : TuningCache(db, false) {}

TuningCache::TuningCache(sqlite3* db, bool owned) : db_(db), owned_(owned) {
  if (!db_) throw Error(SqlState::internal_error, "tuning cache: no database handle");
  create_schema();
}

std::unique_ptr<TuningCache> TuningCache::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) !=
      SQLITE_OK) {
    const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw Error(SqlState::io_error, "tuning cache: cannot open " + path + ": " + message);
  }
  sqlite3_busy_timeout(db, 5000);  // the catalog's own connection may hold the write lock briefly
  try {
    return std::unique_ptr<TuningCache>(new TuningCache(db, true));
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
}

TuningCache::~TuningCache() {
  if (owned_) sqlite3_close(db_);
}

void TuningCache::create_schema() {
  std::lock_guard lock(mutex_);
  const char* sql =
      "CREATE TABLE IF NOT EXISTS tally_tuning_cache ("
      "  device TEXT NOT NULL,"
      "  operator_signature TEXT NOT NULL,"
      "  variant TEXT NOT NULL,"
      "  cardinality_bucket INTEGER NOT NULL,"
      "  best_config TEXT NOT NULL,"
      "  seconds_per_row REAL NOT NULL,"
      "  observations INTEGER NOT NULL,"
      "  source TEXT NOT NULL,"
      "  search_state TEXT NOT NULL,"
      "  updated_at TEXT NOT NULL,"
      "  PRIMARY KEY (device, operator_signature, variant, cardinality_bucket))";
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw Error(SqlState::io_error, "tuning cache: cannot create table: " + message);
  }
}

std::optional<TuningRecord> TuningCache::find(const std::string& device, const std::string& signature,
                                              const std::string& variant, int bucket) const {
  std::lock_guard lock(mutex_);
  Statement st(db_, (std::string("SELECT ") + kColumns +
                     " FROM tally_tuning_cache WHERE device = ?1 AND operator_signature = ?2 AND variant = ?3 "
                     "AND cardinality_bucket = ?4").c_str());
  st.bind(1, device);
  st.bind(2, signature);
  st.bind(3, variant);
  st.bind(4, int64_t{bucket});
  if (!st.step()) return std::nullopt;
  return read_row(st);
}

std::vector<TuningRecord> TuningCache::find_variants(const std::string& device, const std::string& signature,
                                                     int bucket) const {
  std::lock_guard lock(mutex_);
  Statement st(db_, (std::string("SELECT ") + kColumns +
                     " FROM tally_tuning_cache WHERE device = ?1 AND operator_signature = ?2 AND cardinality_bucket = ?3 "
                     "ORDER BY variant").c_str());
  st.bind(1, device);
  st.bind(2, signature);
  st.bind(3, int64_t{bucket});
  std::vector<TuningRecord> out;
  while (st.step()) out.push_back(read_row(st));
  return out;
}

void TuningCache::put(const TuningRecord& r) {
  std::lock_guard lock(mutex_);
  Statement st(db_,
               "INSERT OR REPLACE INTO tally_tuning_cache (device, operator_signature, variant, cardinality_bucket, "
               "best_config, seconds_per_row, observations, source, search_state, updated_at) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  st.bind(1, r.device);
  st.bind(2, r.signature);
  st.bind(3, r.variant);
  st.bind(4, int64_t{r.bucket});
  st.bind(5, r.best_config);
  st.bind(6, r.seconds_per_row);
  st.bind(7, r.observations);
  st.bind(8, r.source);
  st.bind(9, r.search_state);
  st.step();
}

std::vector<TuningRecord> TuningCache::entries(const std::string& device) const {
  std::lock_guard lock(mutex_);
  const std::string sql = std::string("SELECT ") + kColumns + " FROM tally_tuning_cache" +
                          (device.empty() ? "" : " WHERE device = ?1") +
                          " ORDER BY device, operator_signature, variant, cardinality_bucket";
  Statement st(db_, sql.c_str());
  if (!device.empty()) st.bind(1, device);
  std::vector<TuningRecord> out;
  while (st.step()) out.push_back(read_row(st));
  return out;
}

int64_t TuningCache::forget_device(const std::string& device) {
  std::lock_guard lock(mutex_);
  Statement st(db_, "DELETE FROM tally_tuning_cache WHERE device = ?1");
  st.bind(1, device);
  st.step();
  return sqlite3_changes(db_);
}

}  // namespace tally::catalog
