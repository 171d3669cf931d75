// DROP TABLE and TRUNCATE: every name is resolved before anything changes, so
// a missing table in a list leaves all of them in place (as in PostgreSQL).
#include "executor/ddl/ddl.hpp"
#include "executor/ddl/sequence_ddl.hpp"
#include "executor/ddl/view_ddl.hpp"

namespace tally::executor::ddl {

namespace {

// The dotted name of a DROP object (a List of Strings).
std::vector<std::string> object_name(const nlohmann::json& object) {
  std::vector<std::string> parts;
  for (const auto& it : object.at("List").at("items")) parts.push_back(it.at("String").value("sval", std::string()));
  return parts;
}

// DROP INDEX [IF EXISTS] a, b: an index that backs a constraint cannot be
// dropped (2BP01, as in PostgreSQL); ALTER TABLE ... DROP CONSTRAINT drops it.
std::string drop_index(const nlohmann::json& stmt, StatementContext& ctx) {
  const bool missing_ok = stmt.value("missing_ok", false);
  std::vector<std::pair<uint32_t, std::string>> found;
  for (const auto& obj : stmt.at("objects")) {
    const auto parts = object_name(obj);
    const std::string& name = parts.back();
    std::shared_ptr<const catalog::TableSnapshot> owner;
    for (const auto& committed : ctx.store.catalog().tables()) {
      auto table = ctx.find_table(committed->def.name);
      if (!table) continue;
      for (const auto& key : table->def.keys)
        if (key.name == name) owner = table;
    }
    const catalog::KeyConstraint* key = nullptr;
    if (owner)
      for (const auto& k : owner->def.keys)
        if (k.name == name) key = &k;
    if (!key) {
      if (ctx.find_table(name))
        throw Error(SqlState::wrong_object_type, "\"" + name + "\" is not an index");
      if (missing_ok) {
        ctx.out.notice(Error(SqlState::successful_completion, "index \"" + name + "\" does not exist, skipping",
                             Severity::notice));
        continue;
      }
      throw Error(SqlState::undefined_object, "index \"" + name + "\" does not exist");
    }
    if (key->constraint)
      throw std::move(Error(SqlState::dependent_objects_still_exist, "cannot drop index " + name +
                                                                        " because constraint " + name + " on table " +
                                                                        owner->def.name + " requires it")
                          .with_hint("You can drop constraint " + name + " on table " + owner->def.name + " instead."));
    found.emplace_back(owner->def.oid, name);
  }
  for (const auto& [oid, name] : found) {
    ctx.alter_table(oid, [&](const catalog::TableSnapshot& current) {
      catalog::TableDef def = current.def;
      std::erase_if(def.keys, [&](const catalog::KeyConstraint& k) { return k.name == name; });
      return def;
    });
  }
  return "DROP INDEX";
}

}  // namespace

std::string drop(const nlohmann::json& stmt, StatementContext& ctx) {
  const std::string kind = stmt.value("removeType", std::string());
  if (kind == "OBJECT_INDEX") return drop_index(stmt, ctx);
  if (kind == "OBJECT_SEQUENCE") return drop_sequences(stmt, ctx);
  if (kind == "OBJECT_VIEW") return drop_views(stmt, ctx);
  if (kind != "OBJECT_TABLE")
    throw Error(SqlState::feature_not_supported, "DROP " + kind.substr(kind.find('_') + 1) + " is not supported by Tally");
  const bool missing_ok = stmt.value("missing_ok", false);
  if (stmt.value("concurrent", false))
    throw Error(SqlState::feature_not_supported, "DROP TABLE CONCURRENTLY is not supported");
  std::vector<uint32_t> oids;
  for (const auto& obj : stmt.at("objects")) {
    const auto& items = obj.at("List").at("items");
    std::vector<std::string> parts;
    for (const auto& it : items) parts.push_back(it.at("String").value("sval", std::string()));
    const std::string name = parts.back();
    std::string qualified;
    for (const auto& p : parts) qualified += (qualified.empty() ? "" : ".") + p;
    const std::string schema = parts.size() >= 2 ? parts[parts.size() - 2] : "public";
    std::shared_ptr<const catalog::TableSnapshot> snap;
    if (parts.size() <= 2 && schema == "public") snap = ctx.find_table(name);
    if (!snap) {
      if (parts.size() >= 2 && schema != "public" && schema != "pg_catalog" && schema != "information_schema") {
        if (missing_ok) {
          ctx.out.notice(Error(SqlState::successful_completion,
                               "schema \"" + schema + "\" does not exist, skipping", Severity::notice));
          continue;
        }
        throw Error(SqlState::invalid_schema_name, "schema \"" + schema + "\" does not exist");
      }
      if (parts.size() <= 2 && schema == "public" && ctx.view_exists(name))
        throw std::move(Error(SqlState::wrong_object_type, "\"" + name + "\" is not a table")
                            .with_hint("Use DROP VIEW to remove a view."));
      if (missing_ok) {
        ctx.out.notice(Error(SqlState::successful_completion, "table \"" + qualified + "\" does not exist, skipping",
                             Severity::notice));
        continue;
      }
      throw Error(SqlState::undefined_table, "table \"" + qualified + "\" does not exist");
    }
    oids.push_back(snap->def.oid);
  }
  drop_dependent_views(oids, stmt, ctx);
  for (const uint32_t oid : oids) {
    ctx.drop_table(oid);
    // Sequences are not transactional here: in a block, the owned sequences
    // stay (a rollback must find them); outside one they go with the table.
    if (!ctx.transaction) drop_owned_sequences(oid, ctx);
  }
  return "DROP TABLE";
}

std::string truncate(const nlohmann::json& stmt, StatementContext& ctx) {
  if (stmt.value("restart_seqs", false)) {
    // No sequences exist, so RESTART IDENTITY has nothing to do.
  }
  std::vector<uint32_t> oids;
  for (const auto& rel : stmt.at("relations")) oids.push_back(resolve_relation(ctx, rel.at("RangeVar"), /*with_position=*/false)->def.oid);
  for (const uint32_t oid : oids) ctx.truncate_table(oid);
  return "TRUNCATE TABLE";
}

}  // namespace tally::executor::ddl
