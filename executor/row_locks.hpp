#pragma once
// What postgres_fdw asks of a table it modifies: row locks and row identity.
//
// SELECT ... FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE / FOR KEY SHARE.
// Tally has no row locks: in a transaction block the statement takes the
// write lock of each table it locks (storage/table_locks.hpp) and holds it
// until the block ends, which is what PostgreSQL's row locks promise and
// more (a second writer of the whole table waits, not only of those rows).
// postgres_fdw sends these for every UPDATE or DELETE through a foreign
// table, so a shard must accept them. Outside a block the lock would end
// with the statement, so the statement just reads its snapshot.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tally::executor {

// Refuses what PostgreSQL refuses (0A000 "FOR UPDATE is not allowed with
// GROUP BY clause", ...) and what Tally cannot honour (NOWAIT, SKIP LOCKED).
void check_locking_clause(const nlohmann::json& select);

// The tables the clause locks: those it names (FOR UPDATE OF t), else every
// table in FROM (unqualified or public, by name as written).
std::vector<std::string> locked_table_names(const nlohmann::json& select);

// ctid. Tally has none: UPDATE and DELETE rewrite a table's chunks, so a row
// has no stable position that a later statement could name, and a ctid read
// before one write would name another row after it. So referring to ctid is
// 0A000 (throw_row_identity_error). But with use_remote_estimate, postgres_fdw
// plans every UPDATE and DELETE by asking the shard to EXPLAIN the scan of
// its fallback ("SELECT ..., ctid FROM t WHERE ... FOR UPDATE") before it
// decides to send the statement whole; EXPLAIN without ANALYZE therefore
// plans the select with each ctid output as NULL, which costs the same scan.
nlohmann::json without_row_identity(const nlohmann::json& select);
// Throws 0A000 for a reference to ctid (a column the table does not have).
[[noreturn]] void throw_row_identity_error();

}  // namespace tally::executor
