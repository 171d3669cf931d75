// CREATE TABLE: validates the whole definition (names, types, constraints)
// before the catalog sees it, with PostgreSQL's SQLSTATEs.
#include <map>
#include <set>

#include "executor/ddl/ddl.hpp"
#include "executor/ddl/type_name.hpp"

namespace tally::executor::ddl {
namespace {

// PostgreSQL's MaxHeapAttributeNumber.
constexpr size_t max_columns = 1600;
// NAMEDATALEN - 1: longer identifiers are truncated by PostgreSQL with a NOTICE.
constexpr size_t max_identifier_bytes = 63;

[[noreturn]] void unsupported(const StatementContext& ctx, const std::string& what, int location) {
  throw std::move(Error(SqlState::feature_not_supported, what + " is not supported by Tally")
                      .with_position(ctx.position(location)));
}

}  // namespace

std::string create_table(const nlohmann::json& stmt, StatementContext& ctx) {
  const auto& rel = stmt.at("relation");
  const std::string name = relation_name(rel);
  const std::string schema = rel.value("schemaname", std::string("public"));
  const int rel_location = rel.value("location", -1);
  if (schema != "public")
    throw std::move(Error(SqlState::invalid_schema_name, "schema \"" + schema + "\" does not exist")
                        .with_position(ctx.position(rel_location)));
  if (rel.value("relpersistence", std::string("p")) != "p")
    unsupported(ctx, "temporary and unlogged tables are", rel_location);
  if (stmt.contains("inhRelations")) unsupported(ctx, "table inheritance", rel_location);
  if (stmt.contains("partspec") || stmt.contains("partbound")) unsupported(ctx, "partitioned tables", rel_location);
  if (stmt.contains("ofTypename")) unsupported(ctx, "typed tables", rel_location);
  if (name.size() > max_identifier_bytes)
    throw Error(SqlState::name_too_long, "identifier \"" + name + "\" is too long");

  catalog::TableDef def;
  def.name = name;
  def.schema = schema;
  std::set<std::string> seen;
  if (stmt.contains("tableElts")) {
    for (const auto& elt : stmt["tableElts"]) {
      if (!elt.contains("ColumnDef")) {
        const auto& body = elt.begin().value();
        unsupported(ctx, elt.contains("Constraint") ? "table constraints are" : elt.begin().key() + " in CREATE TABLE",
                    body.value("location", -1));
      }
      const auto& col = elt["ColumnDef"];
      const std::string col_name = col.value("colname", std::string());
      const int location = col.value("location", -1);
      if (col_name.size() > max_identifier_bytes)
        throw Error(SqlState::name_too_long, "identifier \"" + col_name + "\" is too long");
      if (!seen.insert(col_name).second)
        throw Error(SqlState::duplicate_column, "column \"" + col_name + "\" specified more than once");
      catalog::ColumnDef c;
      c.name = col_name;
      c.type = resolve_type_name(ctx, col.at("typeName"));
      if (col.contains("collClause")) unsupported(ctx, "COLLATE", location);
      bool saw_null = false;
      if (col.contains("constraints")) {
        for (const auto& con : col["constraints"]) {
          const auto& k = con.at("Constraint");
          const std::string type = k.value("contype", std::string());
          const int con_location = k.value("location", -1);
          if (type == "CONSTR_NOTNULL") {
            if (saw_null)
              throw std::move(Error(SqlState::syntax_error, "conflicting NULL/NOT NULL declarations for column \"" +
                                                                col_name + "\" of table \"" + name + "\"")
                                  .with_position(ctx.position(con_location)));
            c.not_null = true;
          } else if (type == "CONSTR_NULL") {
            if (c.not_null)
              throw std::move(Error(SqlState::syntax_error, "conflicting NULL/NOT NULL declarations for column \"" +
                                                                col_name + "\" of table \"" + name + "\"")
                                  .with_position(ctx.position(con_location)));
            saw_null = true;
          } else {
            static const std::map<std::string, std::string> names = {
                {"CONSTR_DEFAULT", "DEFAULT"},         {"CONSTR_PRIMARY", "PRIMARY KEY"},
                {"CONSTR_UNIQUE", "UNIQUE"},           {"CONSTR_CHECK", "CHECK"},
                {"CONSTR_FOREIGN", "REFERENCES"},      {"CONSTR_IDENTITY", "GENERATED ... AS IDENTITY"},
                {"CONSTR_GENERATED", "generated columns"}, {"CONSTR_EXCLUSION", "EXCLUDE"}};
            auto it = names.find(type);
            unsupported(ctx, (it == names.end() ? type : it->second) + " constraints are", con_location);
          }
        }
      }
      def.columns.push_back(std::move(c));
    }
  }
  if (def.columns.size() > max_columns)
    throw Error(SqlState::too_many_columns, "tables can have at most 1600 columns");
  const bool if_not_exists = stmt.value("if_not_exists", false);
  if (!ctx.create_table(std::move(def), if_not_exists)) {
    ctx.out.notice(Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists, skipping",
                         Severity::notice));
  }
  return "CREATE TABLE";
}

}  // namespace tally::executor::ddl
