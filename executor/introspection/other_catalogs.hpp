#pragma once
// The catalogs of PostgreSQL 15 that hold nothing Tally has (casts, operator
// classes, text search, foreign data, event triggers, subscriptions,
// large objects, security labels, ...): their column lists, so that the
// queries tools send (pg_dump reads each of them) run and answer no rows.
#include <optional>
#include <string_view>

#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

// True for one of these catalogs (pg_catalog names).
bool is_other_catalog(std::string_view name);
// Its columns, without rows; nullopt when `name` is not one of them.
std::optional<Relation> other_catalog(std::string_view name);

}  // namespace tally::executor::introspection
