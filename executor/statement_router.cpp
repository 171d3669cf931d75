#include "executor/statement_router.hpp"

#include "common/error.hpp"
#include "executor/binder.hpp"
#include "executor/cast.hpp"
#include "executor/database.hpp"
#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"
#include "executor/value_codec.hpp"
#include "catalog/catalog.hpp"
#include "storage/numeric_slot.hpp"
#include "storage/table_appender.hpp"
#include "storage/table_store.hpp"
#include "executor/ddl/ddl.hpp"
#include "executor/ddl/statement_context.hpp"
#include "executor/dml/copy_query.hpp"
#include "executor/dml/dml.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

ResultSet tag_only(std::string tag) {
  ResultSet r;
  r.tag = std::move(tag);
  r.returns_rows = false;
  return r;
}

// Appends a query result to a table: assignment casts per target column,
// NOT NULL checks, then one durable commit (nothing is added on error).
uint64_t append_result(storage::TableStore& store, uint32_t oid, const ResultSet& result,
                       const std::vector<int>& targets, const std::vector<TableColumn>& columns,
                       const std::string& table_name) {
  auto appender = store.begin_append(oid);
  const size_t ncols = columns.size();
  std::vector<int> source_of(ncols, -1);
  for (size_t i = 0; i < targets.size(); ++i) source_of[static_cast<size_t>(targets[i])] = static_cast<int>(i);
  for (size_t row = 0; row < result.rows; ++row) {
    for (size_t c = 0; c < ncols; ++c) {
      const SqlType type = columns[c].type;
      Value v = Null{};
      if (source_of[c] >= 0) {
        const Vector& src = result.columns[static_cast<size_t>(source_of[c])];
        v = cast_value(src.get(row), src.type, type, false);
      }
      if (is_null(v)) {
        if (columns[c].not_null) {
          throw Error(SqlState::not_null_violation, "null value in column \"" + columns[c].name + "\" of relation \"" +
                                                        table_name + "\" violates not-null constraint");
        }
        appender->set_null(static_cast<int>(c));
        continue;
      }
      void* slot = nullptr;
      if (!is_text_kind(type.id)) slot = appender->value_slot(static_cast<int>(c));
      switch (type.id) {
        case TypeId::boolean: *static_cast<uint8_t*>(slot) = std::get<bool>(v) ? 1 : 0; break;
        case TypeId::int2: *static_cast<int16_t*>(slot) = static_cast<int16_t>(std::get<int64_t>(v)); break;
        case TypeId::int4:
        case TypeId::date: *static_cast<int32_t*>(slot) = static_cast<int32_t>(std::get<int64_t>(v)); break;
        case TypeId::int8:
        case TypeId::timestamp:
        case TypeId::timestamptz: *static_cast<int64_t*>(slot) = std::get<int64_t>(v); break;
        case TypeId::float4: *static_cast<float*>(slot) = static_cast<float>(std::get<double>(v)); break;
        case TypeId::float8: *static_cast<double*>(slot) = std::get<double>(v); break;
        case TypeId::numeric: {
          // cast_value applied the typmod; unconstrained columns keep each value's scale.
          const Numeric& n = std::get<Numeric>(v);
          storage::store_numeric(type, slot, n.mantissa, n.scale);
          break;
        }
        default: appender->set_text(static_cast<int>(c), std::get<std::string>(v)); break;
      }
    }
    appender->finish_row();
  }
  appender->commit();
  return result.rows;
}

ResultSet run_query(SqlSession& session, const json& select, const std::vector<Value>& parameters) {
  std::vector<uint32_t> types;
  PlanContext pc = session.make_plan_context(&types);
  auto plan = plan_select(select, pc);
  ExecContext ec = session.make_exec_context(&parameters);
  return run_select(*plan, ec);
}

ResultSet insert_select(SqlSession& session, storage::TableStore& store, const json& stmt,
                        const std::vector<Value>& parameters) {
  const auto& rv = stmt["relation"].contains("RangeVar") ? stmt["relation"]["RangeVar"] : stmt["relation"];
  const std::string name = rv.value("relname", "");
  auto table = session.tables()->find_table(rv.value("schemaname", ""), name);
  if (!table) throw Error(SqlState::undefined_table, "relation \"" + name + "\" does not exist");
  std::vector<int> targets;
  if (stmt.contains("cols")) {
    for (const auto& c : stmt["cols"]) {
      const std::string col = c["ResTarget"].value("name", "");
      int index = -1;
      for (size_t i = 0; i < table->columns().size(); ++i) {
        if (table->columns()[i].name == col) index = static_cast<int>(i);
      }
      if (index < 0) {
        throw Error(SqlState::undefined_column, "column \"" + col + "\" of relation \"" + name + "\" does not exist");
      }
      targets.push_back(index);
    }
  } else {
    for (size_t i = 0; i < table->columns().size(); ++i) targets.push_back(static_cast<int>(i));
  }
  ResultSet result = run_query(session, stmt["selectStmt"]["SelectStmt"], parameters);
  if (result.columns.size() > targets.size()) {
    throw Error(SqlState::syntax_error, "INSERT has more expressions than target columns");
  }
  if (result.columns.size() < targets.size() && stmt.contains("cols")) {
    throw Error(SqlState::syntax_error, "INSERT has more target columns than expressions");
  }
  targets.resize(result.columns.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    const SqlType from = result.columns[i].type, to = table->columns()[static_cast<size_t>(targets[i])].type;
    if (!can_cast(from.id, to.id, CastContext::assignment)) {
      throw Error(SqlState::datatype_mismatch, "column \"" + table->columns()[static_cast<size_t>(targets[i])].name +
                                                   "\" is of type " + format_type(to) + " but expression is of type " +
                                                   format_type(from))
          .with_hint("You will need to rewrite or cast the expression.");
    }
  }
  const uint64_t n = append_result(store, table->oid(), result, targets, table->columns(), name);
  return tag_only("INSERT 0 " + std::to_string(n));
}

ResultSet create_table_as(SqlSession& session, storage::TableStore& store, const json& stmt,
                          const std::vector<Value>& parameters) {
  if (stmt.value("objtype", "") != "OBJECT_TABLE") {
    throw Error(SqlState::feature_not_supported, "CREATE MATERIALIZED VIEW is not supported");
  }
  const auto& into = stmt["into"].contains("IntoClause") ? stmt["into"]["IntoClause"] : stmt["into"];
  const auto& rv = into["rel"].contains("RangeVar") ? into["rel"]["RangeVar"] : into["rel"];
  const std::string name = rv.value("relname", "");
  const std::string schema = rv.value("schemaname", "");
  if (!schema.empty() && schema != "public") {
    throw Error(SqlState::invalid_schema_name, "schema \"" + schema + "\" does not exist");
  }
  if (store.catalog().find_table(name, "public")) {
    if (stmt.value("if_not_exists", false)) {
      return tag_only("CREATE TABLE AS");
    }
    throw Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists");
  }
  ResultSet result = run_query(session, stmt["query"]["SelectStmt"], parameters);
  catalog::TableDef def;
  def.name = name;
  std::vector<std::string> names;
  for (const auto& c : into.value("colNames", json::array())) names.push_back(c["String"].value("sval", ""));
  for (size_t i = 0; i < result.columns.size(); ++i) {
    catalog::ColumnDef column;
    column.name = i < names.size() ? names[i] : result.fields[i].name;
    column.type = result.columns[i].type;
    if (column.type.id == TypeId::unknown) column.type = {TypeId::text};
    // Intervals are computed values only: storage has no column kind for them.
    if (column.type.id == TypeId::interval) {
      throw Error(SqlState::feature_not_supported, "type \"interval\" is not supported by Tally");
    }
    def.columns.push_back(std::move(column));
  }
  auto snapshot = store.create_table(def, false);
  std::vector<int> targets;
  std::vector<TableColumn> columns;
  for (size_t i = 0; i < def.columns.size(); ++i) {
    targets.push_back(static_cast<int>(i));
    columns.push_back({def.columns[i].name, def.columns[i].type, false});
  }
  try {
    append_result(store, snapshot->def.oid, result, targets, columns, name);
  } catch (...) {
    store.drop_table(snapshot->def.oid);
    throw;
  }
  return tag_only("SELECT " + std::to_string(result.rows));
}

}  // namespace

std::optional<ResultSet> route_statement(SqlSession& session, const AnalyzedStatement& statement,
                                         const std::vector<Value>& parameters, tally::ResultWriter& out) {
  const std::string& kind = statement.kind;
  const json& body = statement.body();
  storage::TableStore* store = session.database() ? session.database()->store() : nullptr;
  if (store != nullptr) {
    if (kind == "InsertStmt" && body.contains("selectStmt") && !body["selectStmt"]["SelectStmt"].contains("valuesLists")) {
      return insert_select(session, *store, body, parameters);
    }
    if (kind == "CreateTableAsStmt") return create_table_as(session, *store, body, parameters);
    StatementContext ctx{*store, out, statement.sql, session.info().cancel};
    if (kind == "CreateStmt") return tag_only(ddl::create_table(body, ctx));
    if (kind == "DropStmt") return tag_only(ddl::drop(body, ctx));
    if (kind == "TruncateStmt") return tag_only(ddl::truncate(body, ctx));
    if (kind == "InsertStmt") return tag_only(dml::insert(body, ctx));
    if (kind == "CopyStmt" && body.contains("query")) return tag_only(dml::copy_query(session, body, parameters, ctx));
    if (kind == "CopyStmt") return tag_only(dml::copy(body, ctx));
  }
  (void)session;
  (void)parameters;
  (void)out;
  (void)body;
  if (kind == "CreateStmt" || kind == "DropStmt" || kind == "TruncateStmt" || kind == "InsertStmt" ||
      kind == "CopyStmt" || kind == "CreateTableAsStmt") {
    throw Error(SqlState::feature_not_supported, "statement " + kind + " needs the storage layer, which this build lacks");
  }
  return std::nullopt;
}

}  // namespace tally::executor
