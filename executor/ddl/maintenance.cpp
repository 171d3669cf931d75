// VACUUM and ANALYZE. Tally's chunks are written once and never updated in
// place (UPDATE and DELETE rewrite whole chunks), so there is no dead space
// for VACUUM to reclaim; and every chunk's statistics (row count, NULLs,
// min/max, distinct sketch) are computed when it is written, so ANALYZE has
// nothing to refresh. Tools run both anyway (pgbench -i, pg_restore,
// migrations): the statement is checked as PostgreSQL checks it and accepted.
#include "executor/ddl/ddl.hpp"

namespace tally::executor::ddl {

std::string vacuum_or_analyze(const nlohmann::json& stmt, StatementContext& ctx, bool in_transaction_block) {
  const bool vacuum = stmt.value("is_vacuumcmd", false);
  if (vacuum && in_transaction_block) {
    throw Error(SqlState::active_sql_transaction, "VACUUM cannot run inside a transaction block");
  }
  for (const auto& rel : stmt.value("rels", nlohmann::json::array())) {
    const auto& vr = rel.at("VacuumRelation");
    const auto snap = resolve_relation(ctx, vr.at("relation"), false);
    for (const auto& col : vr.value("va_cols", nlohmann::json::array())) {
      const std::string name = col.at("String").value("sval", std::string());
      if (snap->def.find_column(name) < 0) {
        throw Error(SqlState::undefined_column,
                    "column \"" + name + "\" of relation \"" + snap->def.name + "\" does not exist");
      }
    }
  }
  ctx.check_cancel();
  return vacuum ? "VACUUM" : "ANALYZE";
}

}  // namespace tally::executor::ddl
