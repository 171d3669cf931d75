// SqlSession's side of the extended protocol: Parse makes a prepared
// statement, Bind a portal, Execute runs it a batch of rows at a time.
#include "executor/sql_session.hpp"

#include "common/error.hpp"
#include "common/statement_timeline.hpp"
#include "executor/cancel_point.hpp"
#include "executor/notice_scope.hpp"
#include "executor/parser.hpp"
#include "executor/sql_prepared_statement.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor {

using nlohmann::json;

namespace {

class SqlPortal final : public tally::Portal {
 public:
  SqlPortal(SqlSession* session, std::shared_ptr<const AnalyzedStatement> analyzed,
                std::vector<Value> parameters, std::vector<tally::Format> formats)
      : session_(session),
        analyzed_(std::move(analyzed)),
        parameters_(std::move(parameters)),
        formats_(std::move(formats)) {}

  std::optional<std::vector<tally::FieldDescription>> result_fields() const override {
    if (!analyzed_->fields) return std::nullopt;
    auto fields = *analyzed_->fields;
    for (size_t i = 0; i < fields.size(); ++i) fields[i].format = formats_[i];
    return fields;
  }

  bool execute(uint64_t max_rows, tally::ResultWriter& out) override {
    // An empty statement answers EmptyQueryResponse in place of CommandComplete,
    // as PostgreSQL's exec_execute_message does (query_handler.hpp, Portal::execute).
    if (analyzed_->is_empty()) {
      out.empty_query();
      return true;
    }
    const CancelScope cancel_scope(session_->info().cancel);
    const types::ThreadSettingsScope settings_scope(session_->thread_settings());
    const MemoryScope memory_scope(session_->statement_memory_tracker());
    const NoticeScope notice_scope(&out);
    if (!result_) {
      result_ = session_->execute(*analyzed_, parameters_, out);
      statement_timeline().stamp(StatementTimeline::result_ready);
      if (result_->returns_rows) {
        auto fields = result_->fields;
        for (size_t i = 0; i < fields.size() && i < formats_.size(); ++i)
          fields[i].format = formats_[i];
        out.row_description(fields);
      }
    }
    if (!result_->returns_rows) {
      if (!completed_) out.command_complete(result_->tag);
      completed_ = true;
      return true;
    }
    if (formats_.size() < result_->columns.size())
      formats_.resize(result_->columns.size(), tally::Format::text);
    const size_t sent =
        stream_rows(*result_, formats_, position_, max_rows, out);
    if (position_ < result_->rows) return false;
    out.release_after_reply(std::move(result_->retained));
    if (result_->tag == "SELECT")
      out.command_complete("SELECT " + std::to_string(sent));
    else if (result_->tag == "FETCH" || result_->tag == "MOVE")
      out.command_complete(result_->tag + " " + std::to_string(sent));
    else
      out.command_complete(result_->tag);
    completed_ = true;
    return true;
  }

 private:
  SqlSession* session_;
  std::shared_ptr<const AnalyzedStatement> analyzed_;
  std::vector<Value> parameters_;
  std::vector<tally::Format> formats_;
  std::optional<ResultSet> result_;
  size_t position_ = 0;
  bool completed_ = false;
};

}  // namespace

std::unique_ptr<tally::PreparedStatement> SqlSession::prepare(
    std::string_view sql, std::span<const uint32_t> param_types) {
  const types::ThreadSettingsScope settings_scope(thread_settings());
  const auto statements = parse_sql_shared(sql);
  if (statements->size() > 1) {
    throw Error(SqlState::syntax_error,
                "cannot insert multiple commands into a prepared statement");
  }
  std::vector<uint32_t> types(param_types.begin(), param_types.end());
  for (uint32_t t : types) {
    if (t != 0 && !type_from_oid(t)) {
      throw Error(SqlState::feature_not_supported,
                  "parameter type " + std::to_string(t) + " is not supported");
    }
  }
  if (statements->empty()) {
    return std::make_unique<SqlPreparedStatement>(
        analyze_shared(sql, ParsedStatement{}, std::move(types)));
  }
  const ParsedStatement& statement = statements->front();
  check_not_failed(statement.type(), statement.node());
  return std::make_unique<SqlPreparedStatement>(
      analyze_shared(sql, statement, std::move(types)));
}

std::unique_ptr<tally::Portal> SqlSession::bind(
    tally::PreparedStatement& statement, std::span<const tally::ParameterValue> parameters,
    std::span<const tally::Format> result_formats) {
  const types::ThreadSettingsScope settings_scope(thread_settings());
  auto& prepared = dynamic_cast<SqlPreparedStatement&>(statement);
  if (!prepared.analyzed->is_empty())
    check_not_failed(prepared.analyzed->kind, prepared.analyzed->node());
  const std::shared_ptr<const AnalyzedStatement> analyzed = analysis_for_bind(prepared.analyzed);
  // A new analysis over a table's new snapshot serves the statement's next
  // Binds too (reads_current_table), as PostgreSQL keeps a re-made plan.
  if (analyzed != prepared.analyzed && analyzed->reusable_over_table) prepared.analyzed = analyzed;
  if (parameters.size() != analyzed->parameter_types.size()) {
    throw Error(SqlState::protocol_violation,
                "bind message supplies " + std::to_string(parameters.size()) +
                    " parameters, but prepared statement \"\" requires " +
                    std::to_string(analyzed->parameter_types.size()));
  }
  std::vector<Value> values;
  for (size_t i = 0; i < parameters.size(); ++i) {
    const auto id = type_from_oid(analyzed->parameter_types[i]).value_or(TypeId::text);
    const SqlType type{id};
    if (!parameters[i].bytes) {
      values.push_back(Null{});
    } else if (parameters[i].format == tally::Format::binary) {
      values.push_back(parse_binary(type, *parameters[i].bytes));
    } else {
      values.push_back(parse_text(type, *parameters[i].bytes));
    }
  }
  const size_t columns = analyzed->fields ? analyzed->fields->size() : 0;
  std::vector<tally::Format> formats = expand_formats(result_formats, columns);
  return std::make_unique<SqlPortal>(this, analyzed, std::move(values), std::move(formats));
}

}  // namespace tally::executor
