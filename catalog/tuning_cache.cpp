#include "catalog/tuning_cache.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>

#include "common/error.hpp"
#include "gpu/tuner/cardinality_bucket.hpp"
#include "gpu/tuner/search_state_json.hpp"

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

// nullopt when the row cannot be decoded.
std::optional<TuningEntry> read_row(const Statement& st) {
  TuningEntry e;
  e.key.device = st.text(0);
  e.key.operator_signature = st.text(1);
  e.key.variant = st.text(2);
  e.key.cardinality_bucket = static_cast<int>(st.int64(3));
  const auto best = gpu::parse_launch_config(st.text(4));
  const auto source = tuning_source_from_name(st.text(7));
  if (!best || !source) return std::nullopt;
  e.best = *best;
  e.seconds_per_row = st.real(5);
  e.observations = st.int64(6);
  e.source = *source;
  const auto json = nlohmann::json::parse(st.text(8), nullptr, /*allow_exceptions=*/false);
  auto search = gpu::search_state_from_json(json);
  if (!search) return std::nullopt;
  e.search = std::move(*search);
  e.updated_at = st.text(9);
  return e;
}

}  // namespace

int cardinality_bucket(double estimated_groups) { return gpu::cardinality_bucket(estimated_groups); }

std::string operator_signature(const std::vector<std::string>& key_types, int key_width_bytes,
                               std::vector<std::string> aggregates) {
  std::sort(aggregates.begin(), aggregates.end());
  aggregates.erase(std::unique(aggregates.begin(), aggregates.end()), aggregates.end());
  std::string out = "keys=";
  for (size_t i = 0; i < key_types.size(); ++i) out += (i ? "," : "") + key_types[i];
  out += ";width=" + std::to_string(key_width_bytes) + ";aggs=";
  for (size_t i = 0; i < aggregates.size(); ++i) out += (i ? "," : "") + aggregates[i];
  return out;
}

std::string_view tuning_source_name(TuningSource source) {
  switch (source) {
    case TuningSource::rule: return "rule";
    case TuningSource::search: return "search";
    case TuningSource::explored: return "explored";
    case TuningSource::measuring: return "measuring";
  }
  return "?";
}

std::optional<TuningSource> tuning_source_from_name(std::string_view name) {
  for (TuningSource t : {TuningSource::rule, TuningSource::search, TuningSource::explored, TuningSource::measuring}) {
    if (tuning_source_name(t) == name) return t;
  }
  return std::nullopt;
}

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

std::optional<TuningEntry> TuningCache::find(const TuningKey& key) const {
  std::lock_guard lock(mutex_);
  Statement st(db_, (std::string("SELECT ") + kColumns +
                     " FROM tally_tuning_cache WHERE device = ?1 AND operator_signature = ?2 AND variant = ?3 "
                     "AND cardinality_bucket = ?4").c_str());
  st.bind(1, key.device);
  st.bind(2, key.operator_signature);
  st.bind(3, key.variant);
  st.bind(4, int64_t{key.cardinality_bucket});
  if (!st.step()) return std::nullopt;
  return read_row(st);
}

std::vector<TuningEntry> TuningCache::find_variants(const std::string& device, const std::string& signature,
                                                    int bucket) const {
  std::lock_guard lock(mutex_);
  Statement st(db_, (std::string("SELECT ") + kColumns +
                     " FROM tally_tuning_cache WHERE device = ?1 AND operator_signature = ?2 AND cardinality_bucket = ?3 "
                     "ORDER BY variant").c_str());
  st.bind(1, device);
  st.bind(2, signature);
  st.bind(3, int64_t{bucket});
  std::vector<TuningEntry> out;
  while (st.step()) {
    if (auto e = read_row(st)) out.push_back(std::move(*e));
  }
  return out;
}

void TuningCache::put(const TuningEntry& e) {
  std::lock_guard lock(mutex_);
  Statement st(db_,
               "INSERT OR REPLACE INTO tally_tuning_cache (device, operator_signature, variant, cardinality_bucket, "
               "best_config, seconds_per_row, observations, source, search_state, updated_at) "
               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))");
  st.bind(1, e.key.device);
  st.bind(2, e.key.operator_signature);
  st.bind(3, e.key.variant);
  st.bind(4, int64_t{e.key.cardinality_bucket});
  st.bind(5, gpu::to_string(e.best));
  st.bind(6, e.seconds_per_row);
  st.bind(7, e.observations);
  st.bind(8, std::string(tuning_source_name(e.source)));
  st.bind(9, gpu::to_json(e.search).dump());
  st.step();
}

TuningEntry TuningCache::record(const TuningKey& key, const gpu::SearchState& search, TuningSource source) {
  const auto choice = gpu::recorded_choice(search);
  if (!choice) throw Error(SqlState::internal_error, "tuning cache: a search without a measured configuration");
  const bool open = choice->open;
  const double t = choice->seconds_per_row;
  TuningEntry entry;
  entry.key = key;
  entry.best = choice->config;
  entry.seconds_per_row = t;
  entry.source = open ? TuningSource::measuring : source;
  entry.search = search;
  entry.observations = 1;
  if (const auto old = find(key)) {
    if (open && old->search.best) return *old;  // a measured best is worth more than an open measurement
    entry.observations = old->observations + 1;
    // A faster configuration measured earlier (e.g. in a query that explored
    // more) stays the best unless this query re-measured it.
    // (An open measurement's time is no such configuration.)
    if (old->source != TuningSource::measuring && old->best != entry.best && old->seconds_per_row < t &&
        !search.measured.count(old->best)) {
      entry.best = old->best;
      entry.seconds_per_row = old->seconds_per_row;
      entry.source = old->source;
    }
  }
  put(entry);
  return entry;
}

std::vector<TuningEntry> TuningCache::entries(const std::string& device) const {
  std::lock_guard lock(mutex_);
  const std::string sql = std::string("SELECT ") + kColumns + " FROM tally_tuning_cache" +
                          (device.empty() ? "" : " WHERE device = ?1") +
                          " ORDER BY device, operator_signature, variant, cardinality_bucket";
  Statement st(db_, sql.c_str());
  if (!device.empty()) st.bind(1, device);
  std::vector<TuningEntry> out;
  while (st.step()) {
    if (auto e = read_row(st)) out.push_back(std::move(*e));
  }
  return out;
}

int64_t TuningCache::forget_device(const std::string& device) {
  std::lock_guard lock(mutex_);
  Statement st(db_, "DELETE FROM tally_tuning_cache WHERE device = ?1");
  st.bind(1, device);
  st.step();
  return sqlite3_changes(db_);
}

nlohmann::json to_json(const TuningEntry& e) {
  const nlohmann::json search = gpu::to_json(e.search);
  return {{"device", e.key.device},
          {"operator_signature", e.key.operator_signature},
          {"variant", e.key.variant},
          {"cardinality_bucket", e.key.cardinality_bucket},
          {"groups_from", e.key.cardinality_bucket == 0 ? 0.0 : std::ldexp(1.0, e.key.cardinality_bucket)},
          {"groups_to", std::ldexp(1.0, e.key.cardinality_bucket + 1)},
          {"best_config", gpu::to_string(e.best)},
          {"seconds_per_row", e.seconds_per_row},
          {"observations", e.observations},
          {"source", std::string(tuning_source_name(e.source))},
          {"converged", e.search.converged},
          {"chunks_spent", e.search.chunks},
          {"measured_grid", search.at("measured")},
          {"search_path", search.at("path")},
          {"updated_at", e.updated_at}};
}

nlohmann::json to_json(const std::vector<TuningEntry>& entries) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : entries) out.push_back(to_json(e));
  return out;
}

}  // namespace tally::catalog
