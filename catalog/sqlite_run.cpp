#include "catalog/sqlite_run.hpp"

#include <sqlite3.h>

#include "common/error.hpp"

namespace tally::catalog {

void sqlite_run(sqlite3* db, const char* what, const char* sql, const std::vector<SqliteParam>& params,
                const std::function<void(sqlite3_stmt*)>& each_row) {
  const auto fail = [&] { throw Error(SqlState::io_error, std::string(what) + ": " + sqlite3_errmsg(db)); };
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) fail();
  struct Finalize {
    sqlite3_stmt* s;
    ~Finalize() { sqlite3_finalize(s); }
  } finalize{stmt};
  for (size_t i = 0; i < params.size(); ++i) {
    const int index = static_cast<int>(i + 1);
    const int rc = std::holds_alternative<int64_t>(params[i])
                       ? sqlite3_bind_int64(stmt, index, std::get<int64_t>(params[i]))
                       : sqlite3_bind_text(stmt, index, std::get<std::string>(params[i]).c_str(), -1, SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) fail();
  }
  for (;;) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) return;
    if (rc != SQLITE_ROW) fail();
    if (each_row) each_row(stmt);
  }
}

void sqlite_keep_oid(sqlite3* db, const char* what, uint32_t next) {
  sqlite_run(db, what, "UPDATE tally_meta SET value = max(value, ?) WHERE key = 'next_oid'", {int64_t{next}});
}

}  // namespace tally::catalog
