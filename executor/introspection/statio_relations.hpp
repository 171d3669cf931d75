#pragma once
// pg_statio_all_tables and pg_statio_user_tables: PostgreSQL's block I/O
// counters per table, one row per user table. Tally reads column chunks, not
// heap or index blocks, so every counter is 0 (sequelize's describeTable joins
// the view to find column comments).
#include <optional>
#include <string_view>

#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

bool is_statio_relation(std::string_view name);
std::optional<Relation> statio_relation(std::string_view name, const CatalogSource& source);

}  // namespace tally::executor::introspection
