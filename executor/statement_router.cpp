#include "executor/statement_router.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "common/statement_timeline.hpp"
#include "executor/binder.hpp"
#include "executor/cancel_point.hpp"
#include "executor/cast.hpp"
#include "executor/database.hpp"
#include "executor/select_plan.hpp"
#include "executor/statement_words.hpp"
#include "executor/table_provider.hpp"
#include "executor/value_codec.hpp"
#include "catalog/catalog.hpp"
#include "storage/numeric_slot.hpp"
#include "storage/table_appender.hpp"
#include "storage/table_store.hpp"
#include "executor/ddl/ddl.hpp"
#include "executor/ddl/statement_context.hpp"
#include "executor/ddl/view_ddl.hpp"
#include "executor/ddl/type_name.hpp"
#include "executor/dml/constant_value.hpp"
#include "executor/dml/column_default.hpp"
#include "executor/dml/copy_query.hpp"
#include "executor/dml/dml.hpp"
#include "executor/dml/result_append.hpp"
#include "executor/dml/insert_on_conflict.hpp"
#include "executor/dml/merge.hpp"
#include "executor/dml/update_delete.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

ResultSet tag_only(std::string tag) {
  ResultSet r;
  r.tag = std::move(tag);
  r.returns_rows = false;
  return r;
}

// Appends a query result to a table, then one durable commit (or, in a
// transaction block, the block's): nothing is added on error.
uint64_t append_result(const StatementContext& ctx, uint32_t oid, const ResultSet& result,
                       const std::vector<int>& targets, const std::vector<TableColumn>& columns,
                       const std::string& table_name) {
  auto appender = ctx.begin_append(oid);
  const uint64_t rows = dml::append_result_rows(*appender, result, targets, columns, table_name);
  appender->commit();
  return rows;
}

// `into_table`: the rows go into a table's columns, so an untyped output
// (NULL, 'literal') stays unknown and takes the column's type, as PostgreSQL
// resolves INSERT INTO t(float8_column) SELECT ..., NULL.
ResultSet run_query(SqlSession& session, const json& select, const std::vector<Value>& parameters,
                    const StatementContext& ctx, bool into_table = false) {
  // The parameters' types as the statement's analysis inferred them.
  std::vector<uint32_t> types;
  for (const auto& p : ctx.parameters) types.push_back(type_oid(p.type.id));
  PlanContext pc = session.make_plan_context(&types);
  pc.keep_unknown_outputs = into_table;
  auto plan = plan_select(select, pc);
  ExecContext ec = session.make_exec_context(&parameters);
  return run_select(*plan, ec);
}

// `expression` cast to the built-in type `type` (its internal name, as
// pg_catalog.int4): a parse tree's TypeCast node.
json cast_to_builtin(json expression, std::string_view type) {
  json names = json::array({json{{"String", {{"sval", "pg_catalog"}}}}, json{{"String", {{"sval", std::string(type)}}}}});
  return json{{"TypeCast", {{"arg", std::move(expression)}, {"typeName", {{"names", std::move(names)}, {"typemod", -1}}}}}};
}

// INSERT ... SELECT ... ON CONFLICT or RETURNING (and VALUES of
// expressions with them): the query's rows become the VALUES rows of the
// constant path, which decides each row's conflicts (dml/on_conflict.hpp),
// runs DO UPDATE and returns the rows: each value a literal cast to its
// result column's type, assigned to its table column as a VALUES item is.
// nullopt: the query had no row.
std::optional<json> select_rows_as_values(SqlSession& session, const StatementContext& ctx, const json& stmt,
                                          const std::vector<Value>& parameters) {
  // A VALUES list's DEFAULT items stay DEFAULT items: NULL in the query.
  json select = stmt["selectStmt"]["SelectStmt"];
  std::vector<std::pair<size_t, size_t>> defaults;
  if (select.contains("valuesLists")) {
    for (size_t l = 0; l < select["valuesLists"].size(); ++l) {
      json& items = select["valuesLists"][l]["List"]["items"];
      for (size_t k = 0; k < items.size(); ++k) {
        if (!items[k].contains("SetToDefault")) continue;
        defaults.emplace_back(l, k);
        items[k] = json{{"A_Const", {{"isnull", true}}}};
      }
    }
  }
  const ResultSet result = run_query(session, select, parameters, ctx, true);
  if (result.rows == 0) return std::nullopt;
  json lists = json::array();
  std::string text;
  for (size_t r = 0; r < result.rows; ++r) {
    if (r % 4096 == 0) ctx.check_cancel();
    json items = json::array();
    for (const Vector& v : result.columns) {
      json literal = json{{"A_Const", {{"isnull", true}}}};
      if (!v.null_at(r)) {
        text.clear();
        append_text(text, v, r);
        literal = json{{"A_Const", {{"sval", {{"sval", text}}}}}};
      }
      const std::string_view type = internal_type_name(v.type.id);
      items.push_back(type.empty() ? std::move(literal) : cast_to_builtin(std::move(literal), type));
    }
    lists.push_back(json{{"List", {{"items", std::move(items)}}}});
  }
  for (const auto& [l, k] : defaults) lists[l]["List"]["items"][k] = stmt["selectStmt"]["SelectStmt"]["valuesLists"][l]["List"]["items"][k];
  json rewritten = stmt;
  rewritten["selectStmt"] = json{{"SelectStmt", {{"valuesLists", std::move(lists)}}}};
  return rewritten;
}

ResultSet insert_select(SqlSession& session, const StatementContext& ctx, const json& stmt,
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
  // VALUES items of no type of their own (a quoted literal, NULL) take their
  // column's type, as PostgreSQL types them in INSERT ... VALUES: cast to
  // its base type here, the column's length or precision applied when the
  // row is assigned (a quoted date beside now() goes into a date column).
  // A DEFAULT item is its column's default, evaluated here row by row (a
  // sequence's next value for each), as a literal of the column's type.
  json select = stmt["selectStmt"]["SelectStmt"];
  if (select.contains("valuesLists")) {
    const auto stored = ctx.find_table(name);
    for (auto& list : select["valuesLists"]) {
      auto& items = list["List"]["items"];
      for (size_t k = 0; k < items.size() && k < targets.size(); ++k) {
        if (items[k].contains("SetToDefault") && stored) {
          const catalog::ColumnDef& column = stored->def.columns[static_cast<size_t>(targets[k])];
          const ConstantValue v = cast_constant(ctx, dml::column_default(ctx, column), column.type, false, column.name);
          items[k] = v.kind == ConstantValue::Kind::null ? json{{"A_Const", {{"isnull", true}}}}
                                                         : json{{"A_Const", {{"sval", {{"sval", v.text}}}}}};
        }
        const bool untyped = items[k].contains("A_Const") &&
                             (items[k]["A_Const"].contains("sval") || items[k]["A_Const"].value("isnull", false));
        const std::string_view type = internal_type_name(table->columns()[static_cast<size_t>(targets[k])].type.id);
        if (untyped && !type.empty()) items[k] = cast_to_builtin(std::move(items[k]), type);
      }
    }
  }
  ResultSet result = run_query(session, select, parameters, ctx, true);
  if (result.columns.size() > targets.size()) {
    throw Error(SqlState::syntax_error, "INSERT has more expressions than target columns");
  }
  if (result.columns.size() < targets.size() && stmt.contains("cols")) {
    throw Error(SqlState::syntax_error, "INSERT has more target columns than expressions");
  }
  targets.resize(result.columns.size());
  dml::add_default_columns(ctx, name, result, targets);
  dml::check_assignable(result, targets, table->columns());
  const uint64_t n = append_result(ctx, table->oid(), result, targets, table->columns(), name);
  return tag_only("INSERT 0 " + std::to_string(n));
}

ResultSet create_table_as(SqlSession& session, const StatementContext& ctx, const json& stmt,
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
  if (ctx.find_table(name)) {
    if (stmt.value("if_not_exists", false)) {
      return tag_only("CREATE TABLE AS");
    }
    throw Error(SqlState::duplicate_table, "relation \"" + name + "\" already exists");
  }
  statement_timeline().stamp(StatementTimeline::executor_start);
  ResultSet result = run_query(session, stmt["query"]["SelectStmt"], parameters, ctx);
  statement_timeline().stamp(StatementTimeline::executor_end);
  catalog::TableDef def;
  def.name = name;
  std::vector<std::string> names;
  for (const auto& c : into.value("colNames", json::array())) names.push_back(c["String"].value("sval", ""));
  for (size_t i = 0; i < result.columns.size(); ++i) {
    catalog::ColumnDef column;
    column.name = i < names.size() ? names[i] : result.fields[i].name;
    column.type = result.columns[i].type;
    if (column.type.id == TypeId::unknown) column.type = {TypeId::text};
    // Intervals, catalog names, OIDs and arrays are computed values only:
    // storage has no column kind (no width) for them.
    if (storage_width(column.type.id) == 0) {
      throw Error(SqlState::feature_not_supported, "type \"" + format_type(SqlType{column.type.id}) + "\" is not supported by Tally");
    }
    def.columns.push_back(std::move(column));
  }
  std::vector<int> targets;
  std::vector<TableColumn> columns;
  for (size_t i = 0; i < def.columns.size(); ++i) {
    targets.push_back(static_cast<int>(i));
    columns.push_back({def.columns[i].name, def.columns[i].type, false});
  }
  if (ctx.transaction) {
    auto snapshot = ctx.create_table(def, false);
    try {
      append_result(ctx, snapshot->def.oid, result, targets, columns, name);
    } catch (...) {
      ctx.drop_table(snapshot->def.oid);
      throw;
    }
    return tag_only("SELECT " + std::to_string(result.rows));
  }
  // Autocommit: the table and its rows in one catalog commit, as a block of
  // its own, so that a crash never leaves the table without its rows, and
  // the statement pays for one commit; an error rolls both back.
  storage::WriteTransaction statement(ctx.store, ctx.cancel);
  StatementContext in_statement = ctx;
  in_statement.transaction = &statement;
  auto snapshot = in_statement.create_table(def, false);
  statement_timeline().stamp(StatementTimeline::table_created);
  append_result(in_statement, snapshot->def.oid, result, targets, columns, name);
  statement_timeline().stamp(StatementTimeline::rows_written);
  statement.commit();
  statement_timeline().stamp(StatementTimeline::committed);
  return tag_only("SELECT " + std::to_string(result.rows));
}

// INSERT ... VALUES whose values are expressions (CURRENT_TIMESTAMP, now(),
// $1 + 1, as pgbench's history insert): the VALUES list runs as a query and
// its rows are appended, as INSERT ... SELECT (DEFAULT items among them
// too). Lists of constants, parameters and DEFAULT keep the constant path,
// which types literals by their column.
bool values_need_query(const json& insert) {
  if (!insert.contains("selectStmt")) return false;
  const json& select = insert["selectStmt"]["SelectStmt"];
  if (!select.contains("valuesLists")) return false;
  bool expression = false;
  for (const auto& list : select["valuesLists"]) {
    for (const auto& value : list["List"]["items"]) {
      if (!value.contains("SetToDefault") && !is_constant_item(value)) expression = true;
    }
  }
  return expression;
}

// An INSERT's RETURNING list as the table's columns it returns: (name, column).
std::vector<std::pair<std::string, int>> returning_columns(const json& stmt, const StatementContext& ctx,
                                                           const catalog::TableDef& def) {
  std::vector<std::pair<std::string, int>> outputs;
  for (const auto& item : stmt["returningList"]) {
    const auto& target = item.at("ResTarget");
    const auto& val = target.at("val");
    if (!val.contains("ColumnRef"))
      throw Error(SqlState::feature_not_supported, "RETURNING supports only column names and * in Tally");
    const auto& fields = val["ColumnRef"].at("fields");
    const auto& last = fields.back();
    if (last.contains("A_Star")) {
      for (size_t c = 0; c < def.columns.size(); ++c) outputs.emplace_back(def.columns[c].name, static_cast<int>(c));
      continue;
    }
    const std::string name = last.at("String").value("sval", std::string());
    const int column = def.find_column(name);
    if (column < 0) {
      throw std::move(Error(SqlState::undefined_column, "column \"" + name + "\" does not exist")
                          .with_position(ctx.position(val["ColumnRef"].value("location", -1))));
    }
    outputs.emplace_back(target.value("name", name), column);
  }
  return outputs;
}

// INSERT ... RETURNING columns or *: the inserted rows' values (as stored:
// defaults and sequence values included). `inserted` null: no row to insert
// (an INSERT ... SELECT whose query had none), the columns described all
// the same, as PostgreSQL sends them.
ResultSet insert_returning(const json& stmt, StatementContext& ctx, dml::InsertedRows* inserted) {
  const auto snap = resolve_relation(ctx, stmt.at("relation"));
  const catalog::TableDef& def = snap->def;
  const std::vector<std::pair<std::string, int>> outputs = returning_columns(stmt, ctx, def);
  ResultSet result;
  result.tag = inserted ? dml::insert(stmt, ctx, inserted) : "INSERT 0 0";
  for (const auto& [name, column] : outputs) {
    const SqlType type = def.columns[static_cast<size_t>(column)].type;
    result.fields.push_back(describe_column(name, type));
    Vector values(type);
    if (inserted) {
      for (const auto& row : inserted->rows) {
        const auto& text = row[static_cast<size_t>(column)];
        values.push(text ? parse_text(type, *text) : Value{Null{}});
      }
    }
    result.columns.push_back(std::move(values));
  }
  result.rows = inserted ? inserted->rows.size() : 0;
  return result;
}

// INSERT ... VALUES (or DEFAULT VALUES) on the constant path, with its ON
// CONFLICT and RETURNING.
ResultSet insert_values(SqlSession& session, const json& stmt, const std::vector<Value>& parameters, StatementContext& ctx) {
  if (dml::is_on_conflict_update(stmt)) {
    dml::InsertedRows inserted;
    ResultSet appended = stmt.contains("returningList") ? insert_returning(stmt, ctx, &inserted)
                                                        : tag_only(dml::insert(stmt, ctx, &inserted));
    return dml::update_conflicting(session, stmt, inserted, parameters, ctx, std::move(appended));
  }
  if (stmt.contains("returningList")) {
    dml::InsertedRows inserted;
    return insert_returning(stmt, ctx, &inserted);
  }
  return tag_only(dml::insert(stmt, ctx));
}

// CREATE VIEW: the view's columns are those its SELECT has when planned in
// this session.
std::string create_view(SqlSession& session, StatementContext& ctx, const AnalyzedStatement& statement) {
  const auto describe = [&](const json& select) {
    std::vector<uint32_t> types;
    PlanContext pc = session.make_plan_context(&types);
    auto plan = plan_select(select, pc);
    std::vector<catalog::ViewColumn> columns;
    for (const auto& field : select_fields(*plan))
      columns.push_back({field.name, {type_from_oid(field.type_oid).value_or(TypeId::text), field.type_modifier}});
    return columns;
  };
  const auto& parsed = statement.statement;
  const size_t end = parsed.length > 0 ? static_cast<size_t>(parsed.location + parsed.length) : statement.sql.size();
  return ddl::create_view(statement.body(), ctx, describe, end);
}

}  // namespace

std::optional<ResultSet> route_statement(SqlSession& session, const AnalyzedStatement& statement,
                                         const std::vector<Value>& parameters, tally::ResultWriter& out) {
  const std::string& kind = statement.kind;
  const json& body = statement.body();
  storage::TableStore* store = session.database() ? session.database()->store() : nullptr;
  if (store != nullptr) {
    // Cancel and statement_timeout reach the writing too (CREATE TABLE AS and
    // INSERT ... SELECT appending a large result), not only the query.
    const CancelScope cancel_scope(session.info().cancel);
    // In a transaction block the write is the block's (committed at COMMIT).
    StatementContext ctx{*store, out, statement.sql, session.info().cancel, session.write_transaction(),
                         session.database()->config().cpu_threads};
    ctx.sequences = session.sequences();
    ctx.views = session.database()->views();
    for (size_t i = 0; i < parameters.size() && i < statement.parameter_types.size(); ++i) {
      const SqlType type{type_from_oid(statement.parameter_types[i]).value_or(TypeId::text)};
      ctx.parameters.push_back({type, is_null(parameters[i]) ? std::nullopt
                                                             : std::optional(value_to_text(type, parameters[i]))});
    }
    const bool query_rows = kind == "InsertStmt" && body.contains("selectStmt") &&
                            (!body["selectStmt"]["SelectStmt"].contains("valuesLists") || values_need_query(body));
    if (query_rows && !body.contains("onConflictClause") && !body.contains("returningList"))
      return insert_select(session, ctx, body, parameters);
    if (query_rows) {
      const std::optional<json> values = select_rows_as_values(session, ctx, body, parameters);
      if (!values) return body.contains("returningList") ? insert_returning(body, ctx, nullptr) : tag_only("INSERT 0 0");
      return insert_values(session, *values, parameters, ctx);
    }
    if (kind == "CreateTableAsStmt") return create_table_as(session, ctx, body, parameters);
    if (kind == "CreateStmt") return tag_only(ddl::create_table(body, ctx));
    if (kind == "ViewStmt") return tag_only(create_view(session, ctx, statement));
    if (kind == "DropStmt") return tag_only(ddl::drop(body, ctx));
    if (kind == "IndexStmt") return tag_only(ddl::create_index(body, ctx));
    if (kind == "AlterTableStmt") return tag_only(ddl::alter_table(body, ctx));
    if (kind == "CreateSeqStmt") return tag_only(ddl::create_sequence(body, ctx));
    if (kind == "AlterSeqStmt") return tag_only(ddl::alter_sequence(body, ctx));
    if (kind == "RenameStmt") return tag_only(ddl::rename(body, ctx));
    if (kind == "TruncateStmt") return tag_only(ddl::truncate(body, ctx));
    if (kind == "VacuumStmt") {
      const bool in_block = session.transaction_status() != tally::TransactionStatus::idle;
      return tag_only(ddl::vacuum_or_analyze(body, ctx, in_block));
    }
    if (kind == "LockStmt") {
      const bool in_block = session.transaction_status() != tally::TransactionStatus::idle;
      return tag_only(ddl::lock_table(body, ctx, in_block));
    }
    if (kind == "InsertStmt") return insert_values(session, body, parameters, ctx);
    if (kind == "CopyStmt" && body.contains("query")) return tag_only(dml::copy_query(session, body, parameters, ctx));
    if (kind == "CopyStmt") return tag_only(dml::copy(body, ctx));
    if (kind == "UpdateStmt" || kind == "DeleteStmt")
      return dml::update_or_delete(session, body, kind == "UpdateStmt", parameters, ctx);
    if (kind == "MergeStmt") return dml::merge(session, body, parameters, ctx);
  }
  (void)session;
  (void)parameters;
  (void)out;
  (void)body;
  if (kind == "CreateStmt" || kind == "DropStmt" || kind == "IndexStmt" || kind == "TruncateStmt" || kind == "InsertStmt" ||
      kind == "CopyStmt" || kind == "CreateTableAsStmt" || kind == "UpdateStmt" || kind == "DeleteStmt" || kind == "MergeStmt" ||
      kind == "VacuumStmt") {
    throw Error(SqlState::feature_not_supported,
                statement_words(kind, body) + " needs the storage layer, which this build lacks");
  }
  return std::nullopt;
}

}  // namespace tally::executor
