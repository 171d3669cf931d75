#include "server/metrics_query_log.hpp"

#include <atomic>
#include <cctype>
#include <chrono>
#include <deque>
#include <memory>
#include <exception>
#include <optional>
#include <span>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "common/engine_counters.hpp"
#include "common/error.hpp"
#include "common/log.hpp"
#include "server/metrics.hpp"

namespace tally::server {
namespace {

using Clock = std::chrono::steady_clock;

// Statement texts remembered per session for the Execute lines of the
// extended protocol: prepared statements are owned by protocol/, which never
// says when one is closed, so the map is bounded (oldest forgotten first).
constexpr size_t max_remembered_statements = 256;

std::atomic<config::LogStatement> statement_lines{config::LogStatement::all};

// Whether a finished statement gets a "query" line (level info; debug: all).
bool wants_line(const StatementTrace& trace) {
  if (log::enabled(log::Level::debug)) return true;
  if (!log::enabled(log::Level::info)) return false;
  switch (statement_lines.load(std::memory_order_relaxed)) {
    case config::LogStatement::all: return true;
    case config::LogStatement::scans: return trace.rows_scanned > 0 || !trace.engine.empty();
    case config::LogStatement::none: return false;
  }
  return true;
}

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Runs one statement (or Simple Query message) of a session, then logs it.
class StatementObservation {
 public:
  StatementObservation(int32_t pid, std::string_view protocol, std::string_view sql)
      : pid_(pid), protocol_(protocol), sql_(sql), start_(Clock::now()) {
    StatementTrace& trace = statement_trace();
    // clear(), not assignment: the strings keep their capacity.
    trace.rows_scanned = 0;
    trace.bytes_scanned = 0;
    trace.engine.clear();
    trace.variant.clear();
    trace.details.clear();
  }

  void finished() {
    const double ms = milliseconds_since(start_);
    const StatementTrace& trace = statement_trace();
    histogram(trace).observe(ms / 1000);
    if (!wants_line(trace)) return;
    const std::string command = command_word(sql_);
    const std::string engine = trace.engine.empty() ? "none" : trace.engine;
    const std::string variant = trace.variant.empty() ? "none" : trace.variant;
    if (log::enabled(log::Level::debug)) {
      log::debug("query", {{"pid", pid_}, {"protocol", protocol_}, {"command", command},
                           {"duration_ms", ms}, {"engine", engine}, {"variant", variant},
                           {"rows_scanned", trace.rows_scanned.load()}, {"bytes_scanned", trace.bytes_scanned.load()},
                           {"statement", sql_.substr(0, max_logged_statement_chars)}});
      // The engines' own account of the run, as EXPLAIN ANALYZE prints it.
      for (const std::string& line : trace.details) log::debug("query_detail", {{"pid", pid_}, {"line", line}});
    } else {
      log::info("query", {{"pid", pid_}, {"protocol", protocol_}, {"command", command},
                          {"duration_ms", ms}, {"engine", engine}, {"variant", variant},
                          {"rows_scanned", trace.rows_scanned.load()}, {"bytes_scanned", trace.bytes_scanned.load()}});
    }
  }

  void failed(const Error& error) {
    const double ms = milliseconds_since(start_);
    histogram(statement_trace()).observe(ms / 1000);
    const std::string command = command_word(sql_);
    log::error("query_failed", {{"pid", pid_}, {"protocol", protocol_}, {"command", command},
                                {"duration_ms", ms}, {"sqlstate", sqlstate_code(error.state())},
                                {"error", error.what()}});
  }

 private:
  // The registry lookup takes its lock: the two series are looked up once.
  static metrics::Histogram& histogram(const StatementTrace& trace) {
    static metrics::Histogram& cpu = metrics::query_duration_seconds(metrics::Engine::cpu);
    static metrics::Histogram& gpu = metrics::query_duration_seconds(metrics::Engine::gpu);
    return trace.engine == "gpu" ? gpu : cpu;
  }

  int32_t pid_;
  std::string_view protocol_;
  std::string_view sql_;
  Clock::time_point start_;
};

// Runs `body` as one observed statement: logs it, and rethrows what it threw.
template <class Body>
auto observe(int32_t pid, std::string_view protocol, std::string_view sql, Body&& body) {
  StatementObservation observation(pid, protocol, sql);
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      observation.finished();
    } else {
      auto result = body();
      observation.finished();
      return result;
    }
  } catch (const Error& error) {
    observation.failed(error);
    throw;
  } catch (const std::exception& e) {
    observation.failed(Error(SqlState::internal_error, e.what()));
    throw;
  }
}

class LoggedPortal final : public tally::Portal {
 public:
  LoggedPortal(std::unique_ptr<tally::Portal> inner, int32_t pid, std::shared_ptr<const std::string> sql)
      : inner_(std::move(inner)), pid_(pid), sql_(std::move(sql)) {}
  std::optional<std::vector<tally::FieldDescription>> result_fields() const override {
    return inner_->result_fields();
  }
  bool execute(uint64_t max_rows, tally::ResultWriter& out) override {
    return observe(pid_, "extended", sql_ ? std::string_view(*sql_) : std::string_view(),
                   [&] { return inner_->execute(max_rows, out); });
  }

 private:
  std::unique_ptr<tally::Portal> inner_;
  int32_t pid_;
  // Shared with the handler's table of statement texts: a Bind copies no text.
  std::shared_ptr<const std::string> sql_;
};

class LoggedHandler final : public tally::QueryHandler {
 public:
  LoggedHandler(std::unique_ptr<tally::QueryHandler> inner, const tally::SessionInfo& session)
      : inner_(std::move(inner)), pid_(session.process_id), user_(session.user),
        database_(session.database), start_(Clock::now()) {
    auto app = session.startup_parameters.find("application_name");
    log::info("connection", {{"pid", pid_}, {"user", user_}, {"database", database_},
                             {"application_name",
                              app == session.startup_parameters.end() ? std::string() : app->second}});
  }
  ~LoggedHandler() override {
    log::info("disconnection", {{"pid", pid_}, {"user", user_}, {"database", database_},
                                {"duration_ms", milliseconds_since(start_)}, {"statements", statements_}});
  }

  std::vector<std::pair<std::string, std::string>> initial_parameter_status() override {
    return inner_->initial_parameter_status();
  }
  void simple_query(std::string_view sql, tally::ResultWriter& out) override {
    ++statements_;
    observe(pid_, "simple", sql, [&] { inner_->simple_query(sql, out); });
  }
  std::unique_ptr<tally::PreparedStatement> prepare(std::string_view sql,
                                                       std::span<const uint32_t> param_types) override {
    // Parse errors are statement errors too; a successful Parse is not a query.
    std::unique_ptr<tally::PreparedStatement> statement;
    try {
      statement = inner_->prepare(sql, param_types);
    } catch (const Error& error) {
      log::error("query_failed", {{"pid", pid_}, {"protocol", "extended"}, {"command", command_word(sql)},
                                  {"sqlstate", sqlstate_code(error.state())}, {"error", error.what()}});
      throw;
    }
    remember(statement.get(), sql);
    return statement;
  }
  std::unique_ptr<tally::Portal> bind(tally::PreparedStatement& statement,
                                         std::span<const tally::ParameterValue> parameters,
                                         std::span<const tally::Format> result_formats) override {
    // The executor's own statement object goes back unchanged (it downcasts it).
    auto portal = inner_->bind(statement, parameters, result_formats);
    auto text = texts_.find(&statement);
    ++statements_;
    return std::make_unique<LoggedPortal>(std::move(portal), pid_,
                                          text == texts_.end() ? nullptr : text->second);
  }
  tally::TransactionStatus transaction_status() const override { return inner_->transaction_status(); }
  void on_error() override { inner_->on_error(); }
  void sync() override { inner_->sync(); }
  std::optional<uint64_t> statement_timeout_ms() const override { return inner_->statement_timeout_ms(); }

 private:
  void remember(const tally::PreparedStatement* statement, std::string_view sql) {
    if (texts_.size() >= max_remembered_statements) {
      texts_.erase(order_.front());
      order_.pop_front();
    }
    // A freed statement's address may come back: the newest text wins.
    if (texts_.insert_or_assign(statement, std::make_shared<const std::string>(sql)).second)
      order_.push_back(statement);
  }

  std::unique_ptr<tally::QueryHandler> inner_;
  int32_t pid_;
  std::string user_;
  std::string database_;
  Clock::time_point start_;
  uint64_t statements_ = 0;
  std::unordered_map<const tally::PreparedStatement*, std::shared_ptr<const std::string>> texts_;
  std::deque<const tally::PreparedStatement*> order_;
};

}  // namespace

std::unique_ptr<tally::QueryHandler> QueryLogFactory::create(const tally::SessionInfo& session) {
  return std::make_unique<LoggedHandler>(inner_.create(session), session);
}

void set_log_statement(config::LogStatement which) { statement_lines.store(which, std::memory_order_relaxed); }
config::LogStatement log_statement() { return statement_lines.load(std::memory_order_relaxed); }

std::string command_word(std::string_view sql) {
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == '(') {
      ++i;
    } else if (sql.substr(i, 2) == "--") {
      const size_t end = sql.find('\n', i);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (sql.substr(i, 2) == "/*") {
      const size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else {
      break;
    }
  }
  std::string word;
  while (i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i])))
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i++])));
  return word;
}

}  // namespace tally::server
