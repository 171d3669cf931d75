#pragma once
// pg_prewarm(regclass [, mode]): reads every chunk of a table into the host's
// chunk cache (decoded) and, with a GPU, copies its columns into the device
// column cache where they fit, so that the first query over them reads no
// file and copies nothing: what PostgreSQL's pg_prewarm extension does for
// its shared buffers. The modes 'buffer' (the default), 'read' and
// 'prefetch' all do this; the value is the table's size in 8192-byte pages
// (pg_relation_size / 8192), the pages PostgreSQL would have read.
#include <nlohmann/json.hpp>

#include "executor/expression.hpp"

namespace tally::executor {

class TableProvider;

// The call when `node` is pg_prewarm over a table named by a regclass
// literal; null for any other node. 42P01 when no such table, 22023 for a
// mode other than the three.
ExprPtr bind_prewarm_call(const nlohmann::json& node, TableProvider& tables);

}  // namespace tally::executor
