// DROP TABLE and TRUNCATE: every name is resolved before anything changes, so
// a missing table in a list leaves all of them in place (as in PostgreSQL).
#include "executor/ddl/ddl.hpp"

namespace tally::executor::ddl {

std::string drop(const nlohmann::json& stmt, StatementContext& ctx) {
  const std::string kind = stmt.value("removeType", std::string());
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
      if (missing_ok) {
        ctx.out.notice(Error(SqlState::successful_completion, "table \"" + qualified + "\" does not exist, skipping",
                             Severity::notice));
        continue;
      }
      throw Error(SqlState::undefined_table, "table \"" + qualified + "\" does not exist");
    }
    oids.push_back(snap->def.oid);
  }
  for (const uint32_t oid : oids) ctx.drop_table(oid);
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
