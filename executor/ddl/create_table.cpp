// CREATE TABLE: validates the whole definition (names, types, constraints)
// before the catalog sees it, with PostgreSQL's SQLSTATEs.
#include <map>
#include <set>

#include "executor/ddl/column_definition.hpp"
#include "executor/ddl/ddl.hpp"
#include "executor/ddl/key_constraints.hpp"
#include "executor/ddl/sequence_ddl.hpp"

namespace tally::executor::ddl {
namespace {

// PostgreSQL's MaxHeapAttributeNumber.
constexpr size_t max_columns = 1600;

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
        // In SQL words, not the parser's node name: LIKE is the one other element there is.
        const std::string what = elt.contains("TableLikeClause") ? "LIKE" : "this table element";
        unsupported(ctx, what + " in CREATE TABLE", body.value("location", -1));
      }
      ColumnDefinition column = column_definition(elt["ColumnDef"], name, ctx);
      if (!seen.insert(column.column.name).second)
        throw Error(SqlState::duplicate_column, "column \"" + column.column.name + "\" specified more than once");
      for (const nlohmann::json* key : column.keys) keys.emplace_back(key, static_cast<int>(def.columns.size()));
      if (column.owns_sequence) owned.push_back({def.columns.size(), column.identity_options});
      def.columns.push_back(std::move(column.column));
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
