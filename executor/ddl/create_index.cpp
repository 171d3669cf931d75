// CREATE INDEX: Tally's tables are column chunks that every query scans (the
// GPU and CPU engines read whole columns; chunk min/max prune), so an index
// would not be used. Tools create them anyway (pandas' to_sql on its index
// column, ORM migrations), and a refusal there leaves their table half made.
// So the statement is checked as PostgreSQL checks it (the table, the named
// columns, a relation of the index's name) and accepted; nothing is recorded.
#include "executor/ddl/ddl.hpp"

namespace tally::executor::ddl {

std::string create_index(const nlohmann::json& stmt, StatementContext& ctx) {
  const auto snap = resolve_relation(ctx, stmt.at("relation"), false);
  for (const auto& param : stmt.value("indexParams", nlohmann::json::array())) {
    const auto& element = param.at("IndexElem");
    if (!element.contains("name")) continue;  // an expression: its columns are not checked
    const std::string column = element.value("name", std::string());
    if (snap->def.find_column(column) < 0)
      throw Error(SqlState::undefined_column, "column \"" + column + "\" does not exist");
  }
  const std::string name = stmt.value("idxname", std::string());
  if (!name.empty() && ctx.find_table(name)) {
    if (stmt.value("if_not_exists", false)) {
      ctx.out.notice(Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists, skipping",
                           Severity::notice));
      return "CREATE INDEX";
    }
    throw Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists");
  }
  ctx.check_cancel();
  return "CREATE INDEX";
}

}  // namespace tally::executor::ddl
