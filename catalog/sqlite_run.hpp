#pragma once
// One SQLite statement with integer and text parameters, run to completion:
// what the stores that keep their own rows in the catalog database
// (sequences, views) share. The caller holds Catalog::mutex().
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace tally::catalog {

using SqliteParam = std::variant<int64_t, std::string>;

// Runs `sql`, calling each_row (when given) for every result row. Throws
// Error(58030 io_error), prefixed by `what`, when SQLite fails.
void sqlite_run(sqlite3* db, const char* what, const char* sql, const std::vector<SqliteParam>& params,
                const std::function<void(sqlite3_stmt*)>& each_row = {});

// Raises tally_meta's next_oid to at least `next`: an oid handed out by
// Catalog::reserve_oid for an object the catalog's tables do not hold must
// not be handed out again after a restart.
void sqlite_keep_oid(sqlite3* db, const char* what, uint32_t next);

}  // namespace tally::catalog
