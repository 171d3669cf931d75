// SqlSession: construction, the contexts it plans and runs with, and the
// statement handler (a simple Query's statements, dispatch by statement kind).
#include "executor/sql_session.hpp"

#include "common/error.hpp"
#include "common/statement_timeline.hpp"
#include "executor/cancel_point.hpp"
#include "executor/command_result.hpp"
#include "executor/notice_scope.hpp"
#include "executor/database.hpp"
#include "executor/parser.hpp"
#include "executor/select_plan.hpp"
#include "executor/server_settings.hpp"
#include "executor/ddl/session_sequences.hpp"
#include "executor/shared_analyses.hpp"
#include "executor/statement_router.hpp"
#include "executor/statement_words.hpp"
#include "executor/storage_tables.hpp"
#include "executor/types/clock.hpp"
#include "storage/write_transaction.hpp"

namespace tally::executor {

using nlohmann::json;

SqlSession::SqlSession(Database* database, TableProvider* tables, const tally::SessionInfo& info)
    : database_(database), tables_(tables), info_(info) {
  if (database_ && database_->store() && tables_) {
    session_tables_ = std::make_unique<TransactionTableProvider>(
        *tables_, *database_->store(), [this] { return write_transaction_.get(); });
    tables_ = session_tables_.get();
  }
  if (database_ && database_->sequences()) sequences_ = std::make_unique<SessionSequences>(*database_->sequences());
  // The server's default first: a client's startup options (PGOPTIONS="-c
  // statement_timeout=...") override it, as in PostgreSQL.
  if (database_) apply_server_settings(settings_, database_->config());
  settings_.apply_startup(info.startup_parameters);
  settings_.initialize("session_authorization", info.user);
}

std::optional<uint64_t> SqlSession::statement_timeout_ms() const {
  return settings_.milliseconds("statement_timeout");
}

SqlSession::~SqlSession() = default;

PlanContext SqlSession::make_plan_context(std::vector<uint32_t>* parameter_types) {
  PlanContext pc;
  pc.tables = tables_;
  pc.system_relations = system_relations_;
  pc.settings = &settings_;
  pc.parameter_types = parameter_types;
  pc.user = info_.user;
  pc.database = info_.database;
  pc.backend_pid = info_.process_id;
  // Outside a block each statement is its own transaction.
  pc.transaction_time_us = state_ == TxState::idle ? clock_us() : transaction_started_us_;
  pc.sequences = sequences_.get();
  pc.views = database_ ? database_->views() : nullptr;
  return pc;
}

ExecContext SqlSession::make_exec_context(const std::vector<Value>* parameters) {
  ExecContext ec;
  ec.parameters = parameters;
  ec.cancel = info_.cancel;
  ec.threads = database_ ? database_->config().cpu_threads : 1;
  ec.memory_budget = database_ ? database_->config().cpu_memory_budget : 0;
  ec.engine = settings_.get("tally.engine").value_or("auto");
  if (database_)
    database_->prepare(ec, settings_);  // GPU engine, tally.variant, tally.launch_config
  return ec;
}

std::vector<std::pair<std::string, std::string>> SqlSession::initial_parameter_status() {
  return settings_.reported();
}

tally::TransactionStatus SqlSession::transaction_status() const {
  switch (state_) {
    case TxState::idle:
      return tally::TransactionStatus::idle;
    case TxState::in_block:
      return tally::TransactionStatus::in_block;
    case TxState::failed:
      return tally::TransactionStatus::failed;
  }
  return tally::TransactionStatus::idle;
}

void SqlSession::on_error() {
  if (state_ == TxState::in_block) state_ = TxState::failed;
}

void SqlSession::sync() { ++epoch_; }

void SqlSession::report_changed(const std::vector<std::string>& names,
                                tally::ResultWriter& out) {
  for (const auto& name : names) out.parameter_status(name, settings_.get(name).value_or(""));
}

void SqlSession::check_not_failed(const std::string& kind, const json& node) const {
  if (state_ != TxState::failed) return;
  if (kind == "TransactionStmt") {
    const std::string k = node.begin().value().value("kind", "");
    if (k == "TRANS_STMT_ROLLBACK" || k == "TRANS_STMT_COMMIT" || k == "TRANS_STMT_ROLLBACK_TO" ||
        k == "TRANS_STMT_PREPARE" || k == "TRANS_STMT_COMMIT_PREPARED" ||
        k == "TRANS_STMT_ROLLBACK_PREPARED") {
      return;
    }
  }
  throw Error(SqlState::in_failed_sql_transaction,
              "current transaction is aborted, commands ignored until end of transaction block");
}

types::ThreadSettings SqlSession::thread_settings() const {
  if (time_zone_generation_ != settings_.generation()) {
    // Settings checked the name when it was set: a zone that vanished from
    // the database since reads as UTC rather than failing every statement.
    time_zone_ = types::TimeZone::find(settings_.get("TimeZone").value_or("UTC"));
    if (!time_zone_) time_zone_ = types::TimeZone::utc();
    time_zone_generation_ = settings_.generation();
  }
  return types::ThreadSettings{
      time_zone_,
      types::bytea_output_named(settings_.get("bytea_output").value_or("hex")).value_or(types::ByteaOutput::hex),
      types::date_order_of(settings_.get("DateStyle").value_or("ISO, MDY"))};
}

void SqlSession::simple_query(std::string_view sql, tally::ResultWriter& out) {
  const auto statements = parse_sql_shared(sql);
  statement_timeline().stamp(StatementTimeline::parsed);
  if (statements->empty()) {
    out.empty_query();
    return;
  }
  for (const auto& parsed : *statements) {
    // Per statement: a SET TimeZone applies to the statements after it.
    const types::ThreadSettingsScope settings_scope(thread_settings());
    check_not_failed(parsed.type(), parsed.node());
    // Only a single statement's analysis is cached: the cache key is the text.
    std::shared_ptr<const AnalyzedStatement> analyzed =
        statements->size() == 1
            ? analyze_shared(sql, parsed, {})
            : std::make_shared<const AnalyzedStatement>(analyze(sql, parsed, {}));
    analyzed = analysis_for_bind(std::move(analyzed));
    statement_timeline().stamp(StatementTimeline::analyzed);
    run_simple(*analyzed, out);
  }
}

void SqlSession::run_simple(const AnalyzedStatement& analyzed, tally::ResultWriter& out) {
  // Sending the rows is part of the statement: cancel reaches the encoding too.
  const CancelScope cancel_scope(info_.cancel);
  const MemoryScope memory_scope(statement_memory_tracker());
  const NoticeScope notice_scope(&out);
  ResultSet result = execute(analyzed, {}, out);
  statement_timeline().stamp(StatementTimeline::result_ready);
  if (result.returns_rows) {
    out.row_description(result.fields);
    std::vector<tally::Format> formats(result.columns.size(), tally::Format::text);
    size_t position = 0;
    size_t sent = 0;
    try {
      sent = stream_rows(result, formats, position, 0, out);
    } catch (...) {
      // Cancelled while sending: the engine's state (millions of groups) is
      // freed after the error is on the wire, not before.
      out.release_after_reply(std::move(result.retained));
      throw;
    }
    out.release_after_reply(std::move(result.retained));
    if (result.tag == "SELECT" || result.tag == "FETCH")
      out.command_complete(result.tag + " " + std::to_string(sent));
    else
      out.command_complete(result.tag);
  } else {
    out.command_complete(result.tag);
  }
}

std::shared_ptr<MemoryTracker> SqlSession::statement_memory_tracker() const {
  if (!database_) return std::make_shared<MemoryTracker>(0);
  return std::make_shared<MemoryTracker>(database_->config().cpu_memory_budget, database_->server_memory());
}

ResultSet SqlSession::execute(const AnalyzedStatement& statement,
                              const std::vector<Value>& parameters, tally::ResultWriter& out) {
  try {
    return execute_checked(statement, parameters, out);
  } catch (const nlohmann::json::exception& e) {
    // A parse-tree shape this code did not expect: a clean error, never a crash.
    throw Error(SqlState::feature_not_supported,
                std::string("unsupported statement form: ") + e.what());
  }
}

ResultSet SqlSession::execute_checked(const AnalyzedStatement& statement,
                                      const std::vector<Value>& parameters,
                                      tally::ResultWriter& out) {
  if (statement.is_empty()) return command_result("");
  const std::string& kind = statement.kind;
  check_not_failed(kind, statement.node());
  if (info_.cancel != nullptr) info_.cancel->check();
  const json& body = statement.body();
  if (kind == "SelectStmt") {
    std::shared_ptr<const SelectPlan> plan = statement.select;
    if (lock_selected_tables(body)) {
      std::vector<uint32_t> types = statement.parameter_types;
      PlanContext pc = make_plan_context(&types);
      plan = plan_select(body, pc);
    }
    ExecContext ec = make_exec_context(&parameters);
    ec.stream_to_client = true;  // simple query and portals only stream the result (stream_rows)
    return run_select(*plan, ec);
  }
  if (kind == "TransactionStmt") return run_transaction_statement(body, out);
  if (kind == "VariableSetStmt") return run_set(body, out);
  if (kind == "VariableShowStmt") return run_show(body);
  if (kind == "DiscardStmt") return run_discard(body, out);
  if (kind == "ExplainStmt") return run_explain(body, parameters);
  if (kind == "PrepareStmt" || kind == "ExecuteStmt" || kind == "DeallocateStmt")
    return run_prepared_statement_command(kind, body, statement, out);
  if (kind == "DeclareCursorStmt" || kind == "FetchStmt" || kind == "ClosePortalStmt") {
    return run_cursor_statement(kind, body, parameters, out);
  }
  if (auto routed = route_statement(*this, statement, parameters, out)) {
    // A write or DDL may have given a table a new snapshot: the shared
    // analyses of its old one would keep it (and the files a DROP or TRUNCATE
    // retired) alive until they leave the cache.
    if (tables_ != nullptr) release_stale_shared_analyses(*tables_);
    return std::move(*routed);
  }
  throw Error(SqlState::feature_not_supported, statement_words(kind, body) + " is not supported by Tally");
}

}  // namespace tally::executor
