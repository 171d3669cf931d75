#pragma once
// Wraps a session so that SELECTs reading pg_catalog / information_schema
// relations are answered by the catalog evaluator (catalog_query.hpp); every
// other statement, and every transaction-state question, goes to the wrapped
// session unchanged.
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
