#pragma once
// Virtual pg_catalog / information_schema relations, generated at query time
// from Tally's own catalog: what clients (psql, psqlODBC, pgjdbc) read to
// learn the tables, columns and types of a database. Rows hold the values
// PostgreSQL 15 holds for the same tables (real type OIDs, namespaces
// pg_catalog = 11 and public = 2200).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/sql_type.hpp"
#include "executor/value.hpp"

namespace tally::executor::introspection {

struct UserColumn {
  std::string name;
  SqlType type;
  bool not_null = false;
  std::string default_expr;  // as pg_get_expr prints it; empty: none
  char identity = 0;         // attidentity
};

// A sequence (catalog::SequenceDef and its current value).
struct UserSequence {
  uint32_t oid = 0;
  std::string schema = "public";
  std::string name;
  SqlType type;
  int64_t start = 1, increment = 1, min = 1, max = 0, cache = 1;
  bool cycle = false;
  std::optional<int64_t> last_value;  // null until nextval was called
  uint32_t owner_table = 0;
  int owner_column = -1;
};

// A key or index of a user table (catalog::KeyConstraint).
struct UserKey {
  std::string name;
  bool primary = false;
  bool constraint = true;
  bool unique = true;
  std::vector<int> columns;  // 0-based column indexes
  uint32_t oid = 0;
  uint32_t index_oid = 0;
};

struct UserTable {
  uint32_t oid = 0;
  std::string schema = "public";
  std::string name;
  std::vector<UserColumn> columns;
  uint64_t rows = 0;
  std::vector<UserKey> keys;
};

// A view (catalog::ViewDef): its columns and the SELECT as written.
struct UserView {
  uint32_t oid = 0;
  std::string schema = "public";
  std::string name;
  std::vector<UserColumn> columns;
  std::string definition;
  std::vector<uint32_t> depends;  // the tables and views its query reads
};

// One run-time setting of the session (SHOW ALL), for pg_settings.
struct SettingValue {
  std::string name;
  std::string value;          // as SHOW prints it
  std::string default_value;  // what RESET returns to
  std::string description;
};

// What the relations are generated from.
struct CatalogSource {
  std::vector<UserTable> tables;
  std::vector<UserSequence> sequences;
  std::vector<UserView> views;
  std::string database;
  std::string user;
  // Filled only for statements that read pg_settings (catalog_session.cpp).
  std::vector<SettingValue> settings;
  // pg_class/pg_attribute/pg_tables list the system relations too; off only
  // while their own column lists are being built (no recursion).
  bool with_system_relations = true;
};

struct RelationColumn {
  std::string name;
  SqlType type;
};

struct Relation {
  std::vector<RelationColumn> columns;
  std::vector<std::vector<Value>> rows;
};

constexpr int64_t kDatabaseOid = 5;  // the one database a server serves, as pg_database lists it
constexpr int64_t kPgCatalogOid = 11;
constexpr int64_t kPublicOid = 2200;
constexpr int64_t kInformationSchemaOid = 13184;  // PostgreSQL 15's value after initdb
constexpr int64_t kBootstrapUserOid = 10;
constexpr int64_t kDatabaseOwnerOid = 6171;  // pg_database_owner, the public schema's owner

// True for a relation this module provides; schema "" means unqualified.
bool is_catalog_relation(std::string_view schema, std::string_view name);
// The relation's columns and rows; nullopt when it is not a catalog relation.
std::optional<Relation> build_relation(std::string_view schema, std::string_view name, const CatalogSource& source);

// OIDs of catalog relations by name and back (regclass input and output):
// names resolve in pg_catalog only (the search path), and information_schema
// relations print schema-qualified, as regclass output does in PostgreSQL.
std::optional<int64_t> catalog_relation_oid(std::string_view name);
std::optional<std::string> catalog_relation_name(int64_t oid);

// Schemas pg_namespace lists, by OID and back (regnamespace).
std::optional<std::string> namespace_name(int64_t oid);
std::optional<int64_t> namespace_oid(std::string_view name);

// Names of pg_catalog types by OID, for ::regtype output and look-ups.
std::optional<std::string> type_name_of(uint32_t type_oid);
std::optional<uint32_t> type_oid_by_name(std::string_view name);

// The types' I/O functions pg_type names (typinput 'array_in' ...) and the
// access methods' handlers pg_am names, by OID and back (regproc). pg_proc does not list them: Tally defines no functions
// a client could call by these names.
std::optional<std::string> type_function_name(int64_t oid);
// plpgsql's handler functions as regprocedure prints them ("plpgsql_validator(oid)"):
// pg_language and pg_depend name them, pg_proc does not list them.
std::optional<std::string> language_handler_signature(int64_t oid);
std::optional<int64_t> type_function_oid(std::string_view name);

}  // namespace tally::executor::introspection
