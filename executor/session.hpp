#pragma once
// One client session's SQL behaviour (protocol::QueryHandler): statement
// dispatch, transaction block state (I/T/E), settings, prepared statements,
// portals and cursors.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/result_set.hpp"
#include "executor/settings.hpp"
#include "protocol/query_handler.hpp"

namespace tally::executor {

class Database;
class TableProvider;
struct SelectPlan;

class Session final : public protocol::QueryHandler {
 public:
  Session(Database* database, TableProvider* tables, const protocol::SessionInfo& info);
  ~Session() override;

  std::vector<std::pair<std::string, std::string>> initial_parameter_status() override;
  void simple_query(std::string_view sql, protocol::ResultWriter& out) override;
  std::unique_ptr<protocol::PreparedStatement> prepare(std::string_view sql,
                                                       std::span<const uint32_t> param_types) override;
  std::unique_ptr<protocol::Portal> bind(protocol::PreparedStatement& statement,
                                         std::span<const protocol::ParameterValue> parameters,
                                         std::span<const protocol::Format> result_formats) override;
  protocol::TransactionStatus transaction_status() const override;
  void on_error() override;
  void sync() override;

  // A statement analyzed for execution: what Parse produces.
  struct Analyzed {
    std::string sql;
    nlohmann::json node;            // {"SelectStmt": {...}}; null for the empty query
    std::string kind;               // node type name
    std::vector<uint32_t> parameter_types;
    std::shared_ptr<const SelectPlan> select;  // for SELECT (and cursors/EXPLAIN of SELECT)
    std::optional<std::vector<protocol::FieldDescription>> fields;
  };
  // Runs one analyzed statement with parameters; returns its result (rows or a tag).
  ResultSet execute(const Analyzed& statement, const std::vector<Value>& parameters,
                    protocol::ResultWriter& out);
  Analyzed analyze(std::string_view sql, const nlohmann::json& node, std::vector<uint32_t> parameter_types);
  Settings& settings() { return settings_; }
  Database* database() { return database_; }
  TableProvider* tables() { return tables_; }
  const protocol::SessionInfo& info() const { return info_; }
  // Plans (PlanContext) and runs (ExecContext) with this session's settings.
  struct PlanContext make_plan_context(std::vector<uint32_t>* parameter_types);
  struct ExecContext make_exec_context(const std::vector<Value>* parameters);

 private:
  enum class TxState { idle, in_block, failed };
  ResultSet execute_checked(const Analyzed& statement, const std::vector<Value>& parameters,
                            protocol::ResultWriter& out);
  Analyzed analyze_checked(std::string_view sql, const nlohmann::json& node, std::vector<uint32_t> parameter_types);
  void check_not_failed(const std::string& kind, const nlohmann::json& node) const;
  ResultSet run_transaction_statement(const nlohmann::json& body, protocol::ResultWriter& out);
  ResultSet run_set(const nlohmann::json& body, protocol::ResultWriter& out);
  ResultSet run_show(const nlohmann::json& body);
  ResultSet run_discard(const nlohmann::json& body, protocol::ResultWriter& out);
  ResultSet run_cursor_statement(const std::string& kind, const nlohmann::json& body,
                                 const std::vector<Value>& parameters, protocol::ResultWriter& out);
  ResultSet run_explain(const nlohmann::json& body, const std::vector<Value>& parameters);
  void report_changed(const std::vector<std::string>& names, protocol::ResultWriter& out);

  Database* database_;
  TableProvider* tables_;
  protocol::SessionInfo info_;
  Settings settings_;
  TxState state_ = TxState::idle;
  std::map<std::string, std::string> settings_at_begin_;
  struct Cursor {
    ResultSet result;
    size_t position = 0;
  };
  std::map<std::string, Cursor> cursors_;
};

}  // namespace tally::executor
