#pragma once
// The names the reg* types print and read (executor/reg_names.hpp), from the
// same sources as the catalog relations: the database's tables, indexes and
// sequences, the pg_catalog relations and types.
#include <memory>
#include <string>

#include "executor/introspection/catalog_relations.hpp"
#include "executor/reg_names.hpp"

namespace tally::executor {
class Database;
}

namespace tally::executor::introspection {

// database may be null (catalog objects only).
std::shared_ptr<const RegNames> catalog_reg_names(Database* database);
// The same over a catalog source's tables and sequences.
std::shared_ptr<const RegNames> catalog_reg_names(const CatalogSource& source);

}  // namespace tally::executor::introspection
