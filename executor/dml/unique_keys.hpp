#pragma once
// PRIMARY KEY, UNIQUE and CREATE UNIQUE INDEX enforced on every append
// (INSERT, COPY, INSERT ... SELECT, UPDATE's rewrite) through storage's
// append check (storage/append_check.hpp), with PostgreSQL's 23505 message
// and "Key (id)=(1) already exists." detail.
//
// Each key of a table is a hash set of its rows' key values (native bytes,
// text as dictionary codes, which are equal exactly when the strings are).
// The set is built once from storage, and an autocommit append that commits
// hands its set on to the next append of the table (keyed by the snapshot
// version it matches), so a run of single-row INSERTs does not rescan the
// table each time. Appends in a transaction block build their own from the
// block's snapshot (a rolled-back block must not leave its keys behind).
#include <memory>
#include <string>

#include "storage/append_check.hpp"
#include "storage/table_store.hpp"

namespace tally::executor::dml {

// Installs the checks on `store` (once, when the database opens).
void install_unique_key_checks(storage::TableStore& store);

// The rows of `snapshot` as a key would see them: 23505 `could not create
// unique index "name"` with "Key (a)=(1) is duplicated." when two share a
// value. For CREATE UNIQUE INDEX and ALTER TABLE ... ADD PRIMARY KEY/UNIQUE
// over existing rows.
void check_existing_rows_unique(storage::TableStore& store, const catalog::TableSnapshot& snapshot,
                                const catalog::KeyConstraint& key);

}  // namespace tally::executor::dml
