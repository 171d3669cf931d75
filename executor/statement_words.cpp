#include "executor/statement_words.hpp"

#include <string_view>
#include <utility>

namespace tally::executor {
namespace {

// PostgreSQL's ObjectType names (parsenodes.h) in SQL words, for the
// statements whose node names the object only in a field.
std::string object_words(const nlohmann::json& body, const char* field) {
  static constexpr std::pair<std::string_view, std::string_view> objects[] = {
      {"OBJECT_TABLE", "TABLE"},         {"OBJECT_VIEW", "VIEW"},           {"OBJECT_INDEX", "INDEX"},
      {"OBJECT_SEQUENCE", "SEQUENCE"},   {"OBJECT_SCHEMA", "SCHEMA"},       {"OBJECT_FUNCTION", "FUNCTION"},
      {"OBJECT_MATVIEW", "MATERIALIZED VIEW"}, {"OBJECT_TYPE", "TYPE"},     {"OBJECT_DOMAIN", "DOMAIN"},
      {"OBJECT_COLUMN", "TABLE"},        {"OBJECT_EXTENSION", "EXTENSION"}, {"OBJECT_ROLE", "ROLE"},
      {"OBJECT_DATABASE", "DATABASE"},   {"OBJECT_TRIGGER", "TRIGGER"},     {"OBJECT_PROCEDURE", "PROCEDURE"},
      {"OBJECT_FOREIGN_TABLE", "FOREIGN TABLE"}, {"OBJECT_TABCONSTRAINT", "TABLE"}};
  const std::string type = body.value(field, std::string());
  for (const auto& [name, words] : objects)
    if (type == name) return std::string(words);
  return {};
}

}  // namespace

std::string statement_words(const std::string& kind, const nlohmann::json& body) {
  static constexpr std::pair<std::string_view, std::string_view> statements[] = {
      {"CreateSeqStmt", "CREATE SEQUENCE"},
      {"AlterSeqStmt", "ALTER SEQUENCE"},
      {"ViewStmt", "CREATE VIEW"},
      {"CreateSchemaStmt", "CREATE SCHEMA"},
      {"CreateFunctionStmt", "CREATE FUNCTION"},
      {"CreateTrigStmt", "CREATE TRIGGER"},
      {"CreateExtensionStmt", "CREATE EXTENSION"},
      {"CreateRoleStmt", "CREATE ROLE"},
      {"AlterRoleStmt", "ALTER ROLE"},
      {"DropRoleStmt", "DROP ROLE"},
      {"CreatedbStmt", "CREATE DATABASE"},
      {"DropdbStmt", "DROP DATABASE"},
      {"CreateDomainStmt", "CREATE DOMAIN"},
      {"CompositeTypeStmt", "CREATE TYPE"},
      {"CreateEnumStmt", "CREATE TYPE"},
      {"DefineStmt", "CREATE"},
      {"GrantStmt", "GRANT"},
      {"GrantRoleStmt", "GRANT"},
      {"AlterDefaultPrivilegesStmt", "ALTER DEFAULT PRIVILEGES"},
      {"AlterOwnerStmt", "ALTER OWNER"},
      {"CommentStmt", "COMMENT"},
      {"DoStmt", "DO"},
      {"CallStmt", "CALL"},
      {"LockStmt", "LOCK TABLE"},
      {"ListenStmt", "LISTEN"},
      {"UnlistenStmt", "UNLISTEN"},
      {"NotifyStmt", "NOTIFY"},
      {"LoadStmt", "LOAD"},
      {"ClusterStmt", "CLUSTER"},
      {"ReindexStmt", "REINDEX"},
      {"CheckPointStmt", "CHECKPOINT"},
      {"RefreshMatViewStmt", "REFRESH MATERIALIZED VIEW"},
      {"CreateTableSpaceStmt", "CREATE TABLESPACE"},
      {"CreateForeignTableStmt", "CREATE FOREIGN TABLE"},
      {"ImportForeignSchemaStmt", "IMPORT FOREIGN SCHEMA"},
      {"MergeStmt", "MERGE"},
      {"CreateStmt", "CREATE TABLE"},
      {"CreateTableAsStmt", "CREATE TABLE AS"},
      {"IndexStmt", "CREATE INDEX"},
      {"DropStmt", "DROP"},
      {"TruncateStmt", "TRUNCATE TABLE"},
      {"InsertStmt", "INSERT"},
      {"UpdateStmt", "UPDATE"},
      {"DeleteStmt", "DELETE"},
      {"CopyStmt", "COPY"},
      {"SelectStmt", "SELECT"},
  };
  if (kind == "VacuumStmt") return body.value("is_vacuumcmd", false) ? "VACUUM" : "ANALYZE";
  if (kind == "AlterTableStmt") {
    const std::string object = object_words(body, "objtype");
    return "ALTER " + (object.empty() ? std::string("TABLE") : object);
  }
  if (kind == "RenameStmt" || kind == "AlterObjectSchemaStmt") {
    const std::string object = object_words(body, kind == "RenameStmt" ? "renameType" : "objectType");
    return "ALTER " + (object.empty() ? std::string("object") : object);
  }
  if (kind == "DropStmt") {
    const std::string object = object_words(body, "removeType");
    return object.empty() ? "DROP" : "DROP " + object;
  }
  for (const auto& [node, words] : statements)
    if (kind == node) return std::string(words);
  return "this statement";
}

std::string expression_words(const std::string& kind) {
  static constexpr std::pair<std::string_view, std::string_view> expressions[] = {
      {"RowExpr", "a ROW constructor"},
      {"SetToDefault", "DEFAULT in an expression"},
      {"GroupingFunc", "GROUPING here"},
      {"XmlExpr", "an XML function"},
      {"XmlSerialize", "XMLSERIALIZE"},
      {"CurrentOfExpr", "WHERE CURRENT OF"},
      {"NamedArgExpr", "a named argument"},
      {"MultiAssignRef", "an assignment of several columns from one row"},
      {"A_Star", "* in an expression"},
      {"ParamRef", "a parameter here"},
      {"A_Indices", "an array slice"},
      {"JsonExpr", "an SQL/JSON function"},
  };
  for (const auto& [name, words] : expressions)
    if (kind == name) return std::string(words);
  return "this kind of expression";
}

}  // namespace tally::executor
