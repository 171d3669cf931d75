// SqlSession's utility statements: SET/RESET, SHOW, DISCARD and EXPLAIN.
#include "executor/sql_session.hpp"

#include <cctype>
#include <chrono>
#include <cstdio>

#include "common/error.hpp"
#include "executor/command_result.hpp"
#include "executor/operators/physical_operator.hpp"
#include "executor/explain_options.hpp"
#include "executor/row_locks.hpp"
#include "executor/select_plan.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

bool needs_quotes(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return true;
  }
  return s[0] >= '0' && s[0] <= '9';
}

// SET's argument list as PostgreSQL renders it (flatten_set_variable_args).
std::string set_value(const std::string& name, const json& args) {
  std::string out;
  bool first = true;
  for (const auto& arg : args) {
    std::string v = constant_text(arg);
    if (name == "search_path" && arg.contains("A_Const") && arg["A_Const"].contains("sval") &&
        needs_quotes(v)) {
      v = "\"" + v + "\"";
    }
    if (!first) out += ", ";
    out += v;
    first = false;
  }
  return out;
}

}  // namespace

ResultSet SqlSession::run_set(const json& body, tally::ResultWriter& out) {
  const std::string kind = body.value("kind", "");
  std::string name = body.value("name", "");
  if (name == "timezone") name = "TimeZone";
  if (kind == "VAR_RESET_ALL") {
    report_changed(settings_.reset_all(), out);
    return command_result("RESET");
  }
  if (kind == "VAR_SET_MULTI") {
    // SET TRANSACTION ... / SET SESSION CHARACTERISTICS AS TRANSACTION ...
    const bool session_default = name == "SESSION CHARACTERISTICS";
    for (const auto& arg : body.value("args", json::array())) {
      const auto& def = arg["DefElem"];
      const std::string option = def.value("defname", "");
      if (option == "transaction_isolation") {
        settings_.set(session_default ? "default_transaction_isolation" : "transaction_isolation",
                      constant_text(def["arg"]));
      } else if (option == "transaction_read_only") {
        const bool ro = def["arg"]["A_Const"]["ival"].value("ival", 0) != 0;
        settings_.set(session_default ? "default_transaction_read_only" : "transaction_read_only",
                      ro ? "on" : "off");
      }
    }
    return command_result("SET");
  }
  std::pair<std::string, bool> changed;
  if (kind == "VAR_SET_DEFAULT" || kind == "VAR_RESET") {
    changed = settings_.reset(name);
  } else if (kind == "VAR_SET_VALUE") {
    changed = settings_.set(name, set_value(name, body.value("args", json::array())));
  } else {
    throw Error(SqlState::feature_not_supported, "SET FROM CURRENT is not supported");
  }
  if (changed.second)
    out.parameter_status(changed.first, settings_.get(changed.first).value_or(""));
  return command_result(kind == "VAR_RESET" ? "RESET" : "SET");
}

ResultSet SqlSession::run_show(const json& body) {
  std::string name = body.value("name", "");
  if (name == "all") {
    std::vector<std::vector<std::string>> rows;
    for (const auto& [n, v, d] : settings_.all()) rows.push_back({n, v, d});
    return text_rows({"name", "setting", "description"}, rows);
  }
  if (name == "timezone") name = "TimeZone";
  auto value = settings_.get(name);
  if (!value)
    throw Error(SqlState::undefined_object,
                "unrecognized configuration parameter \"" + name + "\"");
  std::string column = settings_.canonical_name(name);
  return text_rows({column}, {{*value}});
}

ResultSet SqlSession::run_discard(const json& body, tally::ResultWriter& out) {
  const std::string target = body.value("target", "");
  if (target == "DISCARD_ALL") {
    if (state_ != TxState::idle) {
      throw Error(SqlState::active_sql_transaction,
                  "DISCARD ALL cannot run inside a transaction block");
    }
    report_changed(settings_.reset_all(), out);
    cursors_.clear();
    if (info_.prepared != nullptr) info_.prepared->remove_all();
    return command_result("DISCARD ALL");
  }
  if (target == "DISCARD_PLANS") return command_result("DISCARD PLANS");
  if (target == "DISCARD_SEQUENCES") return command_result("DISCARD SEQUENCES");
  return command_result("DISCARD TEMP");
}

ResultSet SqlSession::run_explain(const json& body, const std::vector<Value>& parameters) {
  const ExplainOptions options = explain_options(body.value("options", json::array()));
  const json& query = body["query"];
  if (!query.contains("SelectStmt"))
    throw Error(SqlState::feature_not_supported, "EXPLAIN supports SELECT only");
  std::vector<uint32_t> types;
  const auto planning_started = std::chrono::steady_clock::now();
  PlanContext pc = make_plan_context(&types);
  auto plan = plan_select(options.analyze ? query["SelectStmt"] : without_row_identity(query["SelectStmt"]), pc);
  const double planning_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - planning_started).count();
  std::vector<std::string> details;
  OperatorActuals actuals;
  ExecContext ec = make_exec_context(&parameters);
  const SelectPlan& shown = plan_to_run(*plan, ec);
  if (options.analyze) {
    ec.explain = &details;
    ec.actuals = &actuals;
    run_select(shown, ec);
    // PostgreSQL's summary: Planning Time, then Execution Time (the last line).
    char line[64];
    std::snprintf(line, sizeof line, "Planning Time: %.3f ms", planning_ms);
    details.insert(details.empty() ? details.end() : details.end() - 1, line);
  }
  const ExplainNode tree = explain_select(shown, options.analyze ? &actuals : nullptr);
  std::vector<std::vector<std::string>> rows;
  if (options.format == ExplainFormat::text) {
    for (auto& line : explain_text(tree, options.costs)) rows.push_back({line});
    for (auto& line : details) rows.push_back({line});
  } else {
    // One row holding the whole document, as PostgreSQL answers.
    rows.push_back({explain_document(tree, options, details)});
  }
  ResultSet r = text_rows({"QUERY PLAN"}, rows);
  r.fields[0] = explain_field(options);
  r.tag = "EXPLAIN";
  return r;
}

}  // namespace tally::executor
