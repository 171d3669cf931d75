// ALTER TABLE and ALTER ... RENAME: the subcommands that change the catalog
// definition (names, NOT NULL, defaults, keys, and columns added or dropped
// without rewriting the rows: alter_column.cpp), each checked against the
// rows already stored as PostgreSQL checks them. Subcommands that would
// rewrite column chunks (ALTER COLUMN TYPE) and the rest answer 0A000
// naming the subcommand in SQL words.
#include <algorithm>
#include <map>

#include "catalog/view_store.hpp"
#include "executor/ddl/alter_column.hpp"
#include "executor/ddl/ddl.hpp"
#include "executor/ddl/key_constraints.hpp"
#include "executor/ddl/view_ddl.hpp"
#include "executor/dml/column_default.hpp"
#include "executor/dml/unique_keys.hpp"

namespace tally::executor::ddl {
namespace {

// AlterTableType names (parsenodes.h) in SQL words, for 0A000 messages.
std::string subcommand_words(const std::string& subtype) {
  static const std::map<std::string, std::string> words = {
      {"AT_AddColumn", "ADD COLUMN"},           {"AT_DropColumn", "DROP COLUMN"},
      {"AT_AlterColumnType", "ALTER COLUMN TYPE"},
      {"AT_AddIdentity", "ALTER COLUMN ADD GENERATED"}, {"AT_DropIdentity", "ALTER COLUMN DROP IDENTITY"},
      {"AT_SetStatistics", "ALTER COLUMN SET STATISTICS"}, {"AT_SetStorage", "ALTER COLUMN SET STORAGE"},
      {"AT_ChangeOwner", "OWNER TO"},           {"AT_SetTableSpace", "SET TABLESPACE"},
      {"AT_SetRelOptions", "SET (...)"},        {"AT_ResetRelOptions", "RESET (...)"},
      {"AT_EnableTrig", "ENABLE TRIGGER"},      {"AT_DisableTrig", "DISABLE TRIGGER"},
      {"AT_EnableRowSecurity", "ENABLE ROW LEVEL SECURITY"}, {"AT_ClusterOn", "CLUSTER ON"},
      {"AT_SetLogged", "SET LOGGED"},           {"AT_SetUnLogged", "SET UNLOGGED"},
      {"AT_AttachPartition", "ATTACH PARTITION"}, {"AT_DetachPartition", "DETACH PARTITION"},
      {"AT_AddInherit", "INHERIT"},             {"AT_DropInherit", "NO INHERIT"},
      {"AT_ValidateConstraint", "VALIDATE CONSTRAINT"}, {"AT_ReplicaIdentity", "REPLICA IDENTITY"}};
  auto it = words.find(subtype);
  return it == words.end() ? subtype : it->second;
}

[[noreturn]] void unsupported(const std::string& what) {
  throw Error(SqlState::feature_not_supported, "ALTER TABLE ... " + what + " is not supported by Tally");
}

int column_of(const catalog::TableDef& def, const std::string& name) {
  const int index = def.find_column(name);
  if (index < 0)
    throw Error(SqlState::undefined_column,
                "column \"" + name + "\" of relation \"" + def.name + "\" does not exist");
  return index;
}

// One subcommand applied to def (current: the rows it is checked against).
void apply(const nlohmann::json& cmd, catalog::TableDef& def, const catalog::TableSnapshot& current,
           StatementContext& ctx, AfterCommit& after) {
  const std::string subtype = cmd.value("subtype", std::string());
  const std::string name = cmd.value("name", std::string());
  if (subtype == "AT_AddColumn") {
    add_column(cmd, def, current, ctx);
  } else if (subtype == "AT_AddIdentity") {
    add_identity(cmd, def, ctx);
  } else if (subtype == "AT_DropColumn") {
    drop_column(cmd, def, ctx, after);
  } else if (subtype == "AT_SetNotNull") {
    const int c = column_of(def, name);
    for (const auto& chunk : current.chunks) {
      if (static_cast<size_t>(c) < chunk.stats.size() && chunk.stats[static_cast<size_t>(c)].null_count > 0)
        throw Error(SqlState::not_null_violation,
                    "column \"" + name + "\" of relation \"" + def.name + "\" contains null values");
    }
    def.columns[static_cast<size_t>(c)].not_null = true;
  } else if (subtype == "AT_DropNotNull") {
    const int c = column_of(def, name);
    for (const auto& key : def.keys) {
      if (key.primary && std::find(key.columns.begin(), key.columns.end(), c) != key.columns.end())
        throw Error(SqlState::invalid_table_definition, "column \"" + name + "\" is in a primary key");
    }
    def.columns[static_cast<size_t>(c)].not_null = false;
  } else if (subtype == "AT_ColumnDefault") {
    // SET DEFAULT expr (pg_dump's nextval for serial columns) / DROP DEFAULT.
    const int c = column_of(def, name);
    auto& column = def.columns[static_cast<size_t>(c)];
    if (column.identity)
      throw Error(SqlState::syntax_error, "column \"" + name + "\" of relation \"" + def.name +
                                              "\" is an identity column");
    column.default_expr = cmd.contains("def") ? dml::default_expression(ctx, cmd["def"], column) : std::string();
  } else if (subtype == "AT_AddConstraint") {
    const auto& constraint = cmd.at("def").at("Constraint");
    const std::string type = constraint.value("contype", std::string());
    if (type != "CONSTR_PRIMARY" && type != "CONSTR_UNIQUE") {
      static const std::map<std::string, std::string> kinds = {
          {"CONSTR_CHECK", "CHECK"}, {"CONSTR_FOREIGN", "FOREIGN KEY"}, {"CONSTR_EXCLUSION", "EXCLUDE"}};
      auto it = kinds.find(type);
      unsupported("ADD CONSTRAINT " + (it == kinds.end() ? type : it->second));
    }
    if (constraint.contains("indexname")) unsupported("ADD CONSTRAINT ... USING INDEX");
    const size_t added = add_key_constraint(def, constraint, -1, ctx);
    const catalog::KeyConstraint& key = def.keys[added];
    if (key.primary) {
      for (const int c : key.columns) {
        for (const auto& chunk : current.chunks) {
          if (chunk.stats[static_cast<size_t>(c)].null_count > 0)
            throw Error(SqlState::not_null_violation, "column \"" + def.columns[static_cast<size_t>(c)].name +
                                                          "\" of relation \"" + def.name + "\" contains null values");
        }
      }
    }
    dml::check_existing_rows_unique(ctx.store, current, key);
  } else if (subtype == "AT_DropConstraint") {
    auto it = std::find_if(def.keys.begin(), def.keys.end(),
                           [&](const catalog::KeyConstraint& k) { return k.constraint && k.name == name; });
    if (it == def.keys.end()) {
      if (cmd.value("missing_ok", false)) {
        ctx.out.notice(Error(SqlState::successful_completion,
                             "constraint \"" + name + "\" of relation \"" + def.name + "\" does not exist, skipping",
                             Severity::notice));
        return;
      }
      throw Error(SqlState::undefined_object,
                  "constraint \"" + name + "\" of relation \"" + def.name + "\" does not exist");
    }
    def.keys.erase(it);
  } else {
    unsupported(subcommand_words(subtype));
  }
}

// ALTER ... IF EXISTS on a table that does not exist: PostgreSQL's notice, nothing done.
bool missing_and_skipped(const nlohmann::json& stmt, const nlohmann::json& rel, StatementContext& ctx) {
  if (!stmt.value("missing_ok", false) || ctx.find_table(relation_name(rel))) return false;
  ctx.out.notice(Error(SqlState::successful_completion,
                       "relation \"" + relation_name(rel) + "\" does not exist, skipping", Severity::notice));
  return true;
}

}  // namespace

std::string alter_table(const nlohmann::json& stmt, StatementContext& ctx) {
  const std::string objtype = stmt.value("objtype", std::string("OBJECT_TABLE"));
  if (objtype != "OBJECT_TABLE")
    throw Error(SqlState::feature_not_supported, "this ALTER statement is not supported by Tally");
  const auto& rel = stmt.at("relation");
  if (missing_and_skipped(stmt, rel, ctx)) return "ALTER TABLE";
  const auto snap = resolve_relation(ctx, rel, false);
  AfterCommit after;
  ctx.alter_table(snap->def.oid, [&](const catalog::TableSnapshot& current) {
    catalog::TableDef def = current.def;
    after.clear();
    for (const auto& cmd : stmt.at("cmds")) apply(cmd.at("AlterTableCmd"), def, current, ctx, after);
    return def;
  });
  for (const auto& action : after) action();
  return "ALTER TABLE";
}

std::string rename(const nlohmann::json& stmt, StatementContext& ctx) {
  const std::string type = stmt.value("renameType", std::string());
  const std::string newname = stmt.value("newname", std::string());
  if (type == "OBJECT_TABLE" || type == "OBJECT_COLUMN" || type == "OBJECT_TABCONSTRAINT") {
    const auto& rel = stmt.at("relation");
    if (missing_and_skipped(stmt, rel, ctx)) return "ALTER TABLE";
    const auto snap = resolve_relation(ctx, rel, false);
    const std::string subname = stmt.value("subname", std::string());
    // A view stores its query by name, so it would lose the renamed table or
    // column (PostgreSQL's views hold references, which follow the rename).
    const bool view_reads = type == "OBJECT_TABLE"    ? ctx.views && !ctx.views->dependents(snap->def.oid).empty()
                            : type == "OBJECT_COLUMN" ? view_reads_column(snap->def, subname, ctx)
                                                      : false;
    if (view_reads)
      throw Error(SqlState::feature_not_supported,
                  "renaming a table or column that a view reads is not supported by Tally");
    ctx.alter_table(snap->def.oid, [&](const catalog::TableSnapshot& current) {
      catalog::TableDef def = current.def;
      if (type == "OBJECT_TABLE") {
        if (relation_name_taken(ctx, newname, nullptr))
          throw Error(SqlState::duplicate_table, "relation \"" + newname + "\" already exists");
        def.name = newname;
      } else if (type == "OBJECT_COLUMN") {
        const int c = column_of(def, subname);
        if (def.find_column(newname) >= 0)
          throw Error(SqlState::duplicate_column,
                      "column \"" + newname + "\" of relation \"" + def.name + "\" already exists");
        def.columns[static_cast<size_t>(c)].name = newname;
      } else {
        auto it = std::find_if(def.keys.begin(), def.keys.end(),
                               [&](const catalog::KeyConstraint& k) { return k.constraint && k.name == subname; });
        if (it == def.keys.end())
          throw Error(SqlState::undefined_object,
                      "constraint \"" + subname + "\" for table \"" + def.name + "\" does not exist");
        if (relation_name_taken(ctx, newname, nullptr))
          throw Error(SqlState::duplicate_table, "relation \"" + newname + "\" already exists");
        it->name = newname;
      }
      return def;
    });
    return "ALTER TABLE";
  }
  throw Error(SqlState::feature_not_supported,
              "ALTER " + std::string(type == "OBJECT_INDEX" ? "INDEX" : type == "OBJECT_VIEW" ? "VIEW" : "object") +
                  " ... RENAME is not supported by Tally");
}

}  // namespace tally::executor::ddl
