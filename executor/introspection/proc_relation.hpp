#pragma once
// pg_catalog.pg_proc: PostgreSQL 15's columns, one row per function,
// aggregate and window function signature Tally answers
// (executor/function_catalog.hpp), with PostgreSQL 15's OIDs.
#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

Relation pg_proc_relation();

}  // namespace tally::executor::introspection
