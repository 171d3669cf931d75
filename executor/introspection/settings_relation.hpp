#pragma once
// pg_settings: the session's run-time settings (what SHOW ALL lists) in
// PostgreSQL 15's view shape: setting in the base unit (statement_timeout
// '5s' -> setting 5000, unit ms; work_mem '4MB' -> 4096 kB), with the
// category, context, type, range and enum values PostgreSQL 15 reports for
// the same parameter.
#include "executor/introspection/catalog_relations.hpp"

namespace tally::executor::introspection {

Relation pg_settings_relation(const CatalogSource& source);

}  // namespace tally::executor::introspection
