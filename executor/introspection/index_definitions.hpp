#pragma once
// The definitions pg_get_indexdef and pg_get_constraintdef print for the
// indexes and key constraints of Tally's tables (catalog::KeyConstraint),
// worded as PostgreSQL 15 prints a btree index over plain columns.
#include <memory>
#include <string>

#include "catalog/table_snapshot.hpp"
#include "executor/key_definitions.hpp"

namespace tally::executor {
class Database;
}

namespace tally::executor::introspection {

// "CREATE [UNIQUE] INDEX name ON [schema.]table USING btree (a, b)" for
// column 0, else key column `column`'s name ("" past the last key column).
std::string index_definition(const catalog::TableDef& table, const catalog::KeyConstraint& key,
                             int column, bool qualify);
// "PRIMARY KEY (a, b)" or "UNIQUE (c)".
std::string constraint_definition(const catalog::TableDef& table,
                                  const catalog::KeyConstraint& key);

// Both over the database's tables as they are when asked; database may be
// null (nothing has a definition).
std::shared_ptr<const KeyDefinitions> catalog_key_definitions(Database* database);

}  // namespace tally::executor::introspection
