// CREATE TABLE: validates the whole definition (names, types, constraints)
// before the catalog sees it, with PostgreSQL's SQLSTATEs.
#include <map>
#include <set>

#include "executor/ddl/ddl.hpp"
#include "executor/ddl/key_constraints.hpp"
#include "executor/ddl/sequence_ddl.hpp"
#include "executor/dml/column_default.hpp"
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

// serial, bigserial and smallserial (and serial2/4/8): the integer type of
// a column that owns a sequence.
std::optional<TypeId> serial_type(const nlohmann::json& type_name) {
  const auto& names = type_name.at("names");
  if (names.size() != 1 || type_name.contains("arrayBounds") || type_name.contains("typmods")) return std::nullopt;
  const std::string n = names[0].at("String").value("sval", std::string());
  if (n == "serial" || n == "serial4") return TypeId::int4;
  if (n == "bigserial" || n == "serial8") return TypeId::int8;
  if (n == "smallserial" || n == "serial2") return TypeId::int2;
  return std::nullopt;
}

bool is_key_constraint(const nlohmann::json& constraint) {
  const std::string type = constraint.value("contype", std::string());
  return type == "CONSTR_PRIMARY" || type == "CONSTR_UNIQUE";
}

[[noreturn]] void unsupported_constraint(const StatementContext& ctx, const nlohmann::json& constraint) {
  static const std::map<std::string, std::string> names = {
      {"CONSTR_DEFAULT", "DEFAULT"},         {"CONSTR_PRIMARY", "PRIMARY KEY"},
      {"CONSTR_UNIQUE", "UNIQUE"},           {"CONSTR_CHECK", "CHECK"},
      {"CONSTR_FOREIGN", "REFERENCES"},      {"CONSTR_IDENTITY", "GENERATED ... AS IDENTITY"},
      {"CONSTR_GENERATED", "generated columns"}, {"CONSTR_EXCLUSION", "EXCLUDE"}};
  const std::string type = constraint.value("contype", std::string());
  auto it = names.find(type);
  unsupported(ctx, (it == names.end() ? type : it->second) + " constraints are", constraint.value("location", -1));
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
  if (sequence_exists(ctx, name) || ctx.view_exists(name)) throw Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists");

  catalog::TableDef def;
  def.name = name;
  def.schema = schema;
  std::set<std::string> seen;
  // Keys are added once every column is known: (constraint, column or -1).
  std::vector<std::pair<const nlohmann::json*, int>> keys;
  // serial and identity columns: (column, identity options or null).
  std::vector<std::pair<size_t, const nlohmann::json*>> owned;
  if (stmt.contains("tableElts")) {
    for (const auto& elt : stmt["tableElts"]) {
      if (elt.contains("Constraint") && is_key_constraint(elt["Constraint"])) {
        keys.emplace_back(&elt["Constraint"], -1);
        continue;
      }
      if (!elt.contains("ColumnDef")) {
        const auto& body = elt.begin().value();
        if (elt.contains("Constraint")) unsupported_constraint(ctx, body);
        unsupported(ctx, elt.begin().key() + " in CREATE TABLE", body.value("location", -1));
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
      const std::optional<TypeId> serial = serial_type(col.at("typeName"));
      c.type = serial ? SqlType{*serial} : resolve_type_name(ctx, col.at("typeName"));
      if (serial) owned.push_back({def.columns.size(), nullptr});
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
          } else if (is_key_constraint(k)) {
            keys.emplace_back(&k, static_cast<int>(def.columns.size()));
          } else if (type == "CONSTR_IDENTITY") {
            if (serial || !owned.empty() && owned.back().first == def.columns.size())
              throw std::move(Error(SqlState::syntax_error, "multiple identity specifications for column \"" +
                                                                col_name + "\" of table \"" + name + "\"")
                                  .with_position(ctx.position(con_location)));
            if (c.type.id != TypeId::int2 && c.type.id != TypeId::int4 && c.type.id != TypeId::int8)
              throw Error(SqlState::invalid_parameter_value, "identity column type must be smallint, integer, or bigint");
            c.identity = k.value("generated_when", std::string("a"))[0];
            owned.push_back({def.columns.size(), k.contains("options") ? &k["options"] : nullptr});
          } else if (type == "CONSTR_DEFAULT") {
            if (serial)
              throw std::move(Error(SqlState::syntax_error, "multiple default values specified for column \"" +
                                                                col_name + "\" of table \"" + name + "\"")
                                  .with_position(ctx.position(con_location)));
            c.default_expr = dml::default_expression(ctx, k.at("raw_expr"), c);
          } else {
            unsupported_constraint(ctx, k);
          }
        }
      }
      def.columns.push_back(std::move(c));
    }
  }
  if (def.columns.size() > max_columns)
    throw Error(SqlState::too_many_columns, "tables can have at most 1600 columns");
  for (const auto& [constraint, column] : keys) {
    const size_t added = add_key_constraint(def, *constraint, column, ctx);
    // PostgreSQL makes one index of two identical keys (a PRIMARY KEY wins).
    for (size_t i = 0; i < added; ++i) {
      if (def.keys[i].columns != def.keys[added].columns) continue;
      if (def.keys[added].primary) def.keys[i] = def.keys[added];
      def.keys.pop_back();
      break;
    }
  }
  const bool if_not_exists = stmt.value("if_not_exists", false);
  if (!owned.empty()) {
    // The owned sequences need the table's oid (and must not be made for a
    // table that already exists).
    if (ctx.find_table(name)) {
      if (!if_not_exists) throw Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists");
      ctx.out.notice(Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists, skipping",
                           Severity::notice));
      return "CREATE TABLE";
    }
    def.oid = ctx.store.catalog().reserve_oid();
    for (const auto& [column, options] : owned) create_owned_sequence(def, column, options, ctx);
  }
  if (!ctx.create_table(std::move(def), if_not_exists)) {
    ctx.out.notice(Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists, skipping",
                         Severity::notice));
  }
  return "CREATE TABLE";
}

}  // namespace tally::executor::ddl
