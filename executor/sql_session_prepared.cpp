// SqlSession's SQL-level prepared statements: PREPARE, EXECUTE and
// DEALLOCATE, over the same named statements as the protocol's Parse and
// Close (SessionInfo::prepared), as PostgreSQL keeps one namespace for both.
#include "executor/sql_session.hpp"

#include "common/error.hpp"
#include "executor/binder.hpp"
#include "executor/command_result.hpp"
#include "executor/select_plan.hpp"
#include "executor/sql_prepared_statement.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

std::string quoted(const std::string& name) { return "\"" + name + "\""; }

Error missing(const std::string& name) {
  return Error(SqlState::invalid_sql_statement_name, "prepared statement " + quoted(name) + " does not exist");
}

// CAST(arg AS type) as a parse tree: the TypeName comes from parsing
// PostgreSQL's own spelling of the type.
json cast_node(const json& arg, uint32_t type_oid_value) {
  const SqlType type{type_from_oid(type_oid_value).value_or(TypeId::text)};
  const auto parsed = parse_sql_shared("SELECT NULL::" + format_type(type));
  const json& cast = parsed->at(0).body().at("targetList").at(0).at("ResTarget").at("val").at("TypeCast");
  return {{"TypeCast", {{"arg", arg}, {"typeName", cast.at("typeName")}}}};
}

}  // namespace

ResultSet SqlSession::run_prepared_statement_command(const std::string& kind, const json& body,
                                                     const AnalyzedStatement& statement,
                                                     tally::ResultWriter& out) {
  if (info_.prepared == nullptr)
    throw Error(SqlState::feature_not_supported, "prepared statements are not available in this session");
  auto& registry = *info_.prepared;
  const std::string name = body.value("name", "");
  if (kind == "DeallocateStmt") {
    if (name.empty()) {  // DEALLOCATE ALL
      registry.remove_all();
      return command_result("DEALLOCATE ALL");
    }
    if (!registry.remove(name)) throw missing(name);
    return command_result("DEALLOCATE");
  }
  if (kind == "PrepareStmt") {
    if (registry.lookup(name))
      throw Error(SqlState::duplicate_prepared_statement, "prepared statement " + quoted(name) + " already exists");
    std::vector<uint32_t> types;
    for (const auto& type_name : body.value("argtypes", json::array()))
      types.push_back(type_oid(resolve_type_name(type_name.contains("TypeName") ? type_name["TypeName"] : type_name).id));
    ParsedStatement inner;
    inner.tree = std::make_shared<const json>(body.at("query"));
    // Not through the analysis cache: its key is the text, which is the
    // PREPARE statement's, not the prepared one's.
    auto analyzed = std::make_shared<const AnalyzedStatement>(analyze(statement.sql, inner, std::move(types)));
    registry.add(name, std::make_shared<SqlPreparedStatement>(std::move(analyzed)));
    return command_result("PREPARE");
  }
  // EXECUTE name [(arguments)]: each argument cast to its parameter's type.
  const auto found = registry.lookup(name);
  if (!found) throw missing(name);
  auto* prepared = dynamic_cast<SqlPreparedStatement*>(found.get());
  if (prepared == nullptr) throw missing(name);
  const json arguments = body.value("params", json::array());
  const auto& types = prepared->analyzed->parameter_types;
  if (arguments.size() != types.size()) {
    throw std::move(
        Error(SqlState::syntax_error, "wrong number of parameters for prepared statement " + quoted(name))
            .with_detail("Expected " + std::to_string(types.size()) + " parameters but got " +
                         std::to_string(arguments.size()) + "."));
  }
  std::vector<Value> values;
  if (!arguments.empty()) {
    json targets = json::array();
    for (size_t i = 0; i < arguments.size(); ++i)
      targets.push_back({{"ResTarget", {{"val", cast_node(arguments[i], types[i])}}}});
    const json select = {{"targetList", std::move(targets)},
                         {"limitOption", "LIMIT_OPTION_DEFAULT"},
                         {"op", "SETOP_NONE"}};
    PlanContext pc = make_plan_context(nullptr);
    const auto plan = plan_select(select, pc);
    const std::vector<Value> none;
    ExecContext ec = make_exec_context(&none);
    const ResultSet row = run_select(*plan, ec);
    for (const auto& column : row.columns) values.push_back(column.get(0));
  }
  const auto analyzed = analysis_for_bind(prepared->analyzed);
  if (analyzed->is_empty()) return command_result("");
  return execute(*analyzed, values, out);
}

}  // namespace tally::executor
