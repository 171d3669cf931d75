#pragma once
// One client session's SQL behaviour (tally::QueryHandler), one file per
// job: the statement handler (sql_session.cpp), analysis and its caches
// (sql_session_analysis.cpp), transaction blocks (sql_session_transactions.cpp),
// SET/SHOW/RESET/DISCARD/EXPLAIN (sql_session_utility.cpp), cursors
// (sql_session_cursors.cpp), PREPARE/EXECUTE/DEALLOCATE
// (sql_session_prepared.cpp), and the extended protocol's prepared statements
// and portals (sql_session_extended.cpp).
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/memory_tracker.hpp"
#include "executor/analyzed_statement.hpp"
#include "executor/parser.hpp"
#include "executor/result_set.hpp"
#include "executor/settings.hpp"
#include "executor/types/thread_settings.hpp"
#include "common/query_handler.hpp"
#include "storage/write_transaction.hpp"


namespace tally::executor {

class Database;
class SystemRelationProvider;
class SessionSequences;
class TableProvider;

class SqlSession final : public tally::QueryHandler {
 public:
  SqlSession(Database* database, TableProvider* tables, const tally::SessionInfo& info);
  ~SqlSession() override;

  std::vector<std::pair<std::string, std::string>> initial_parameter_status() override;
  void simple_query(std::string_view sql, tally::ResultWriter& out) override;
  std::unique_ptr<tally::PreparedStatement> prepare(
      std::string_view sql, std::span<const uint32_t> param_types) override;
  std::unique_ptr<tally::Portal> bind(tally::PreparedStatement& statement,
                                         std::span<const tally::ParameterValue> parameters,
                                         std::span<const tally::Format> result_formats) override;
  tally::TransactionStatus transaction_status() const override;
  void on_error() override;
  void sync() override;
  // SET statement_timeout (the server's statement_timeout_ms is the session default).
  std::optional<uint64_t> statement_timeout_ms() const override;

  // Runs one analyzed statement with parameters; returns its result (rows or a tag).
  ResultSet execute(const AnalyzedStatement& statement, const std::vector<Value>& parameters,
                    tally::ResultWriter& out);
  AnalyzedStatement analyze(std::string_view sql, const ParsedStatement& statement,
                            std::vector<uint32_t> parameter_types);
  // analyze() through the session's analysis cache (see analysis_cache_),
  // then the process's shared analyses (shared_analyses.hpp), where a new
  // analysis of a SELECT over one table goes too.
  std::shared_ptr<const AnalyzedStatement> analyze_shared(std::string_view sql,
                                                          const ParsedStatement& statement,
                                                          std::vector<uint32_t> parameter_types);
  // The analysis a Bind runs with: `analyzed` itself, or a fresh plan when it
  // reads a table through a snapshot from an earlier epoch (PostgreSQL takes
  // the portal's snapshot at Bind). 0A000 when the table's columns changed
  // the result type, as PostgreSQL's "cached plan must not change result type".
  std::shared_ptr<const AnalyzedStatement> analysis_for_bind(
      std::shared_ptr<const AnalyzedStatement> analyzed);
  Settings& settings() { return settings_; }
  // The settings values read and print by (its TimeZone's zone, bytea_output,
  // DateStyle's date order), which each statement's thread installs
  // (types::ThreadSettingsScope) while the session reads, runs and sends it.
  types::ThreadSettings thread_settings() const;
  Database* database() { return database_; }
  TableProvider* tables() { return tables_; }
  // This session's view of the sequences (currval, lastval); null without storage.
  SessionSequences* sequences() { return sequences_.get(); }
  // The catalog relations this session's statements may read (null: none);
  // the provider outlives the session's use of it.
  void set_system_relations(SystemRelationProvider* relations) { system_relations_ = relations; }
  // The open transaction block's writes (made on its first write); null
  // outside a block or without storage: each write statement commits itself.
  storage::WriteTransaction* write_transaction();
  const tally::SessionInfo& info() const { return info_; }
  // A fresh tracker of one statement's memory against the CPU memory budget.
  std::shared_ptr<MemoryTracker> statement_memory_tracker() const;
  // Plans (PlanContext) and runs (ExecContext) with this session's settings.
  struct PlanContext make_plan_context(std::vector<uint32_t>* parameter_types);
  struct ExecContext make_exec_context(const std::vector<Value>* parameters);

 private:
  enum class TxState { idle, in_block, failed };
  ResultSet execute_checked(const AnalyzedStatement& statement,
                            const std::vector<Value>& parameters, tally::ResultWriter& out);
  AnalyzedStatement analyze_checked(std::string_view sql, const ParsedStatement& statement,
                                    std::vector<uint32_t> parameter_types);
  void check_not_failed(const std::string& kind, const nlohmann::json& node) const;
  // Runs one analyzed statement of a simple Query and writes its result.
  void run_simple(const AnalyzedStatement& analyzed, tally::ResultWriter& out);
  ResultSet run_transaction_statement(const nlohmann::json& body, tally::ResultWriter& out);
  ResultSet run_set(const nlohmann::json& body, tally::ResultWriter& out);
  ResultSet run_show(const nlohmann::json& body);
  ResultSet run_discard(const nlohmann::json& body, tally::ResultWriter& out);
  ResultSet run_cursor_statement(const std::string& kind, const nlohmann::json& body,
                                 const std::vector<Value>& parameters, tally::ResultWriter& out);
  ResultSet run_explain(const nlohmann::json& body, const std::vector<Value>& parameters);
  // PREPARE, EXECUTE (the prepared statement's result) and DEALLOCATE.
  ResultSet run_prepared_statement_command(const std::string& kind, const nlohmann::json& body,
                                           const AnalyzedStatement& statement, tally::ResultWriter& out);
  void report_changed(const std::vector<std::string>& names, tally::ResultWriter& out);
  // Whether `a` is reusable_over_table and its table's current snapshot is
  // the one it read (one catalog look-up, no analysis).
  bool reads_current_table(const AnalyzedStatement& a) const;
  // planning_settings_fingerprint of the current settings (made once per
  // settings generation).
  const std::string& planning_settings();

  // SELECT ... FOR UPDATE in a block: takes the write lock of the tables it
  // locks (row_locks.hpp) until the block ends. Whether it took any, in
  // which case the statement is planned again over what the lock protects.
  bool lock_selected_tables(const nlohmann::json& select);
  // Ends the block's writes: commits them (COMMIT) or discards them.
  void end_write_transaction(bool commit);

  Database* database_;
  TableProvider* tables_;
  std::unique_ptr<SessionSequences> sequences_;
  SystemRelationProvider* system_relations_ = nullptr;
  // tables_ when there is storage: the shared provider seen through the
  // open block's uncommitted writes (storage_tables.hpp).
  std::unique_ptr<TableProvider> session_tables_;
  std::unique_ptr<storage::WriteTransaction> write_transaction_;
  // Open savepoints, oldest first, each with the block's writes when it was
  // made (null without storage).
  std::vector<std::pair<std::string, std::shared_ptr<const storage::WriteTransaction::Savepoint>>> savepoints_;
  tally::SessionInfo info_;
  Settings settings_;
  mutable std::shared_ptr<const types::TimeZone> time_zone_;  // of settings_ at time_zone_generation_
  mutable uint64_t time_zone_generation_ = UINT64_MAX;
  TxState state_ = TxState::idle;
  int64_t transaction_started_us_ = 0;  // BEGIN's clock_us(): now() in the block
  std::map<std::string, std::string> settings_at_begin_;
  struct Cursor {
    ResultSet result;
    size_t position = 0;
  };
  std::map<std::string, Cursor> cursors_;
  // Counts Binds (simple-query statements included) and Syncs: a plan made in
  // the current epoch (Parse, then Bind in the same pipelined batch, as
  // pgbench and JDBC send them) still reads the tables as they are at Bind;
  // one made earlier is re-planned (see AnalyzedStatement::planned_at).
  uint64_t epoch_ = 0;
  // Analyses that depend only on the statement text, its parameter types and
  // the session's settings (SELECTs of constants and parameters, SET, SHOW,
  // BEGIN/COMMIT ...), by text + parameter types. Emptied when a setting
  // changes (a DateStyle or search_path change can change an analysis).
  std::unordered_map<std::string, std::shared_ptr<const AnalyzedStatement>> analysis_cache_;
  uint64_t analysis_cache_settings_ = 0;  // Settings::generation() of its entries
  // Entries of analysis_cache_ that are reusable_over_table: each holds its
  // table's snapshot (and so the files a DROP or TRUNCATE retired) until it
  // is replaced, so there are few of them.
  size_t table_analyses_ = 0;
  // The cached analysis analyze_shared found current in epoch validated_at_.
  const AnalyzedStatement* validated_ = nullptr;
  uint64_t validated_at_ = 0;

  std::string planning_settings_;
  uint64_t planning_settings_at_ = UINT64_MAX;  // Settings::generation() of planning_settings_
};

// Analyses reused over an unchanged table since the process started
// (SqlSession::reads_current_table): a planning skipped each.
uint64_t table_analysis_reuses();

}  // namespace tally::executor
