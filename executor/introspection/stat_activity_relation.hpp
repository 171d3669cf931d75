#pragma once
// pg_stat_activity: one row per client session of the server, with what it
// runs (common/backend_activity.hpp). Tally has no background processes to
// list, waits to report or transaction ids to show: those columns are NULL,
// as are usesysid, client_hostname and a TCP client's client_port (the
// port is not kept); client_addr (inet in PostgreSQL) is its text.
#include <optional>
#include <string_view>

#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

bool is_stat_activity_relation(std::string_view name);
std::optional<Relation> stat_activity_relation(std::string_view name);

}  // namespace tally::executor::introspection
