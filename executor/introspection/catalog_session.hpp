#pragma once
// Wraps a session so that the statements reading pg_catalog /
// information_schema relations find them: before each, the catalog relations
// (catalog_relation_provider.hpp) are listed afresh from the database, and
// the session's own planner and operators answer it like any other query.
#include <memory>

#include "common/query_handler.hpp"

namespace tally::executor {
class Database;
}

namespace tally::executor::introspection {

// database may be null (no table listing then: the catalog shows no user tables).
std::unique_ptr<tally::QueryHandler> wrap_session(std::unique_ptr<tally::QueryHandler> session,
                                                     Database* database, const tally::SessionInfo& info);

}  // namespace tally::executor::introspection
