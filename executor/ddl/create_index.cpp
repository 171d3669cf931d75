// CREATE [UNIQUE] INDEX: Tally's tables are column chunks that every query
// scans (the GPU and CPU engines read whole columns of every chunk that
// the chunks' min/max do not rule out), so
// an index would not make a plan faster, and none is built. Tools create
// them anyway (pandas' to_sql on its index column, ORM migrations) and read
// them back (pg_index, psql's \d), so an index on columns is recorded in the
// catalog; a UNIQUE one is enforced as a UNIQUE constraint is
// (executor/dml/unique_keys.hpp). A plain index on expressions, or a partial
// one (WHERE), is checked and accepted but not recorded.
#include <algorithm>

#include "executor/ddl/ddl.hpp"
#include "executor/ddl/key_constraints.hpp"
#include "executor/dml/unique_keys.hpp"

namespace tally::executor::ddl {

std::string create_index(const nlohmann::json& stmt, StatementContext& ctx) {
  const auto snap = resolve_relation(ctx, stmt.at("relation"), false);
  const bool unique = stmt.value("unique", false);
  std::vector<int> columns;
  bool expressions = false;
  for (const auto& param : stmt.value("indexParams", nlohmann::json::array())) {
    const auto& element = param.at("IndexElem");
    if (!element.contains("name")) {  // an expression: its columns are not checked
      expressions = true;
      continue;
    }
    const std::string column = element.value("name", std::string());
    const int index = snap->def.find_column(column);
    if (index < 0) throw Error(SqlState::undefined_column, "column \"" + column + "\" does not exist");
    columns.push_back(index);
  }
  const bool partial = stmt.contains("whereClause");
  if (unique && partial)
    throw Error(SqlState::feature_not_supported, "partial unique indexes (CREATE UNIQUE INDEX ... WHERE) are not supported by Tally");
  if (unique && expressions)
    throw Error(SqlState::feature_not_supported, "unique indexes on expressions are not supported by Tally");
  const std::string name = stmt.value("idxname", std::string());
  if (!name.empty() && relation_name_taken(ctx, name, &snap->def)) {
    if (stmt.value("if_not_exists", false)) {
      ctx.out.notice(Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists, skipping",
                           Severity::notice));
      return "CREATE INDEX";
    }
    throw Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists");
  }
  ctx.check_cancel();
  if (expressions || partial) return "CREATE INDEX";
  ctx.alter_table(snap->def.oid, [&](const catalog::TableSnapshot& current) {
    catalog::TableDef def = current.def;
    catalog::KeyConstraint key;
    key.constraint = false;
    key.unique = unique;
    key.columns = columns;
    key.name = name.empty() ? choose_key_name(def, columns, "idx", ctx) : name;
    if (unique) dml::check_existing_rows_unique(ctx.store, current, key);
    def.keys.push_back(std::move(key));
    return def;
  });
  return "CREATE INDEX";
}

}  // namespace tally::executor::ddl
