#pragma once
// The system relations Tally provides, as pg_class lists
// them: PostgreSQL 15's OIDs (fixed for catalogs; the values initdb gives the
// system views), namespace, kind and row type. pg_class, pg_attribute,
// pg_tables, pg_views and regclass input/output all read this one table.
#include <cstdint>
#include <span>
#include <string_view>

namespace tally::executor::introspection {

struct SystemRelation {
  int64_t oid;
  const char* name;
  int64_t namespace_oid;  // pg_catalog (11) or information_schema
  char kind;              // 'r' catalog table, 'v' view
  int64_t row_type;       // pg_class.reltype
  bool shared;            // pg_database, pg_authid: one per cluster
};

std::span<const SystemRelation> system_relations();
const SystemRelation* find_system_relation(std::string_view name);
const SystemRelation* find_system_relation(int64_t oid);

}  // namespace tally::executor::introspection
