#pragma once
// One client session's SQL behaviour (protocol::QueryHandler): statement
// dispatch, transaction block state (I/T/E), settings, prepared statements,
// portals and cursors.
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/parser.hpp"
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
  // SET statement_timeout (the server's statement_timeout_ms is the session default).
  std::optional<uint64_t> statement_timeout_ms() const override;

  // A statement analyzed for execution: what Parse produces. Immutable once
  // made; prepared statements, portals and the analysis cache share it.
  struct Analyzed {
    std::string sql;
    ParsedStatement statement;      // no tree for the empty query
    std::string kind;               // node type name
    std::vector<uint32_t> parameter_types;
    std::shared_ptr<const SelectPlan> select;  // for SELECT (and cursors/EXPLAIN of SELECT)
    std::optional<std::vector<protocol::FieldDescription>> fields;
    // Session::epoch_ when this was planned: a SELECT over a table planned in
    // an earlier epoch holds an old table snapshot and is re-planned at Bind.
    uint64_t planned_at = 0;
    // A SELECT over one table whose analysis depends on nothing but its text,
    // parameter types, the session's settings and the table's snapshot (no
    // function but plain aggregates, no subquery): while the table's current
    // snapshot has the version this one read (TableSnapshot::version) and the
    // settings are those of settings_generation, it is what a new analysis
    // would make, and is reused instead (Session::reads_current_table).
    bool reusable_over_table = false;
    uint64_t settings_generation = 0;
    // Statements that ran with this analysis, counted for the statement
    // history when it is one of the process's shared analyses (null
    // otherwise); copies of it share the count.
    std::shared_ptr<std::atomic<uint64_t>> runs;
    // Made from another text's analysis by giving its literals this text's
    // values (statement_shape.hpp): `statement` is that other text's tree,
    // so a new analysis parses `sql` first.
    bool from_shape = false;
    bool is_empty() const { return !statement.tree; }
    // {"SelectStmt": {...}} and its body; only when !is_empty().
    const nlohmann::json& node() const { return statement.node(); }
    const nlohmann::json& body() const { return statement.body(); }
  };
  // An analysis of a SELECT over one table as the template of its text's
  // shape (statement_shape.hpp): which literals may take other values.
  struct ShapeTemplate {
    std::shared_ptr<const Analyzed> analyzed;
    std::vector<int64_t> values;              // per literal, as written in its text
    std::vector<std::pair<int, bool>> slots;  // per literal: literal_location (-1: fixed), negated
  };
  // Runs one analyzed statement with parameters; returns its result (rows or a tag).
  ResultSet execute(const Analyzed& statement, const std::vector<Value>& parameters,
                    protocol::ResultWriter& out);
  Analyzed analyze(std::string_view sql, const ParsedStatement& statement, std::vector<uint32_t> parameter_types);
  // analyze() through the session's analysis cache (see analysis_cache_),
  // then the process's shared analyses (shared_analyses.hpp), where a new
  // analysis of a SELECT over one table goes too, counting `shared_uses`.
  std::shared_ptr<const Analyzed> analyze_shared(std::string_view sql, const ParsedStatement& statement,
                                                 std::vector<uint32_t> parameter_types, uint64_t shared_uses = 1);
  // The analysis a Bind runs with: `analyzed` itself, or a fresh plan when it
  // reads a table through a snapshot from an earlier epoch (PostgreSQL takes
  // the portal's snapshot at Bind). 0A000 when the table's columns changed
  // the result type, as PostgreSQL's "cached plan must not change result type".
  std::shared_ptr<const Analyzed> analysis_for_bind(std::shared_ptr<const Analyzed> analyzed);
  // Whether `sql` has the shape of a text this session analyzed whose
  // literals may take other values (statement_shape.hpp): then it names the
  // same relations as that text. For texts the parse cache does not hold.
  bool has_shape(std::string_view sql);
  // Makes the analyses remember_shape kept into shape templates (this
  // session's and the process's shared ones).
  void make_pending_shapes();
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
  Analyzed analyze_checked(std::string_view sql, const ParsedStatement& statement, std::vector<uint32_t> parameter_types);
  void check_not_failed(const std::string& kind, const nlohmann::json& node) const;
  // Runs one analyzed statement of a simple Query and writes its result.
  void run_simple(const Analyzed& analyzed, protocol::ResultWriter& out);
  ResultSet run_transaction_statement(const nlohmann::json& body, protocol::ResultWriter& out);
  ResultSet run_set(const nlohmann::json& body, protocol::ResultWriter& out);
  ResultSet run_show(const nlohmann::json& body);
  ResultSet run_discard(const nlohmann::json& body, protocol::ResultWriter& out);
  ResultSet run_cursor_statement(const std::string& kind, const nlohmann::json& body,
                                 const std::vector<Value>& parameters, protocol::ResultWriter& out);
  ResultSet run_explain(const nlohmann::json& body, const std::vector<Value>& parameters);
  void report_changed(const std::vector<std::string>& names, protocol::ResultWriter& out);
  // Whether `a` is reusable_over_table and its table's current snapshot is
  // the one it read (one catalog look-up, no analysis).
  bool reads_current_table(const Analyzed& a) const;
  // planning_settings_fingerprint of the current settings (made once per
  // settings generation).
  const std::string& planning_settings();
  // SET tally.plan_reuse (default on): shared analyses and shapes are used.
  bool plan_reuse() {
    (void)planning_settings();
    return plan_reuse_;
  }
  // A text that differs from an analyzed one only in literals that may take
  // other values (statement_shape.hpp): its analysis, made from that one's
  // plan without a parse; null when there is none or it is not current.
  std::shared_ptr<const Analyzed> analysis_by_shape(std::string_view sql);
  // Keeps a new analysis of a SELECT over one table as the template of its
  // text's shape, when some of its literals may take other values.
  void remember_shape(const std::shared_ptr<const Analyzed>& analyzed);
  void make_shape(const std::shared_ptr<const Analyzed>& analyzed);

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
  // Counts Binds (simple-query statements included) and Syncs: a plan made in
  // the current epoch (Parse, then Bind in the same pipelined batch, as
  // pgbench and JDBC send them) still reads the tables as they are at Bind;
  // one made earlier is re-planned (see Analyzed::planned_at).
  uint64_t epoch_ = 0;
  // Analyses that depend only on the statement text, its parameter types and
  // the session's settings (SELECTs of constants and parameters, SET, SHOW,
  // BEGIN/COMMIT ...), by text + parameter types. Emptied when a setting
  // changes (a DateStyle or search_path change can change an analysis).
  std::unordered_map<std::string, std::shared_ptr<const Analyzed>> analysis_cache_;
  uint64_t analysis_cache_settings_ = 0;  // Settings::generation() of its entries
  // Entries of analysis_cache_ that are reusable_over_table: each holds its
  // table's snapshot (and so the files a DROP or TRUNCATE retired) until it
  // is replaced, so there are few of them.
  size_t table_analyses_ = 0;
  // The cached analysis analyze_shared found current in epoch validated_at_.
  const Analyzed* validated_ = nullptr;
  uint64_t validated_at_ = 0;
  std::unordered_map<std::string, ShapeTemplate> shapes_;
  std::vector<std::shared_ptr<const Analyzed>> pending_shapes_;  // remember_shape's, not yet templates
  // The ShapeTemplate of a text's shape: this session's, or one another
  // session shared (made current here); null when there is none.
  const ShapeTemplate* shape_template(const std::string& key);

  std::string planning_settings_;
  bool plan_reuse_ = true;  // SET tally.plan_reuse, read with planning_settings_
  uint64_t planning_settings_at_ = UINT64_MAX;  // Settings::generation() of planning_settings_
};

// Analyses reused over an unchanged table since the process started
// (Session::reads_current_table): a planning skipped each.
uint64_t table_analysis_reuses();
// Analyses made from another text's by its shape (Session::analysis_by_shape)
// since the process started: a parse and a planning skipped each.
uint64_t shape_analyses();

}  // namespace tally::executor
