#pragma once
// A QueryHandler for framing tests. It is NOT SQL: it understands a tiny
// command language so that tests can make the session see every kind of
// result. Commands in a simple Query are separated by ';':
//   rows N     RowDescription (one int4 column "n"), N DataRows, "SELECT N"
//   rowsfail N N DataRows,
//              then ERROR 22012, as `SELECT 1/(n-N) FROM generate_series(0,N) n`
//              fails in PostgreSQL after its first rows left
//   held       "HELD", after handing ResultWriter::release_after_reply an
//              object whose destructor calls held_released() (tests set it)
//   fail       ERROR 42601        fatal   FATAL 57P01       crash  std::runtime_error
//   begin      status T, "BEGIN"  commit  status I, "COMMIT"
//   notice     a NoticeResponse   setting a ParameterStatus
//   copy in    CopyInResponse (2 columns), reads all data, "COPY <bytes>"
//   copy out   CopyOutResponse, two CopyData, CopyDone, "COPY 2"
//   wait       spins until the session's cancel token fires (then 57014)
// An empty or blank string gives EmptyQueryResponse. In the extended protocol
// "rows N" prepares a statement with N rows, "echo $1" returns its parameter.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>

#include "common/query_handler.hpp"

namespace tally::protocol::testing {

inline std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// "rows N" with N checked: the fuzzer must not be able to ask for a billion rows.
inline int row_count(const std::string& text) {
  int n = 0;
  for (char c : text) {
    if (c < '0' || c > '9' || n > 100000) {
      throw Error(SqlState::invalid_parameter_value, "fake handler: bad row count " + text);
    }
    n = n * 10 + (c - '0');
  }
  if (text.empty() || n > 100000) {
    throw Error(SqlState::invalid_parameter_value, "fake handler: bad row count " + text);
  }
  return n;
}

inline FieldDescription int4_field(std::string name) {
  FieldDescription f;
  f.name = std::move(name);
  f.type_oid = 23;
  f.type_size = 4;
  return f;
}

class FakeStatement : public PreparedStatement {
 public:
  explicit FakeStatement(std::string command, std::vector<uint32_t> types)
      : command(std::move(command)), types(std::move(types)) {}
  std::vector<uint32_t> parameter_types() const override { return types; }
  std::optional<std::vector<FieldDescription>> result_fields() const override {
    if (command.rfind("rows", 0) == 0) return std::vector<FieldDescription>{int4_field("n")};
    if (command.rfind("echo", 0) == 0) return std::vector<FieldDescription>{int4_field("p")};
    return std::nullopt;
  }
  std::string command;
  std::vector<uint32_t> types;
};

// What "held" hands to the writer, and who hears of its release.
inline std::function<void()>& held_released() {
  static std::function<void()> callback;
  return callback;
}
struct HeldObject {
  ~HeldObject() {
    if (held_released()) held_released()();
  }
};
inline void held(ResultWriter& out) {
  out.release_after_reply(std::make_shared<HeldObject>());
  out.command_complete("HELD");
}

// N DataRows of one int4 column, then division by zero.
inline void rows_then_fail(int n, ResultWriter& out) {
  for (int i = 0; i < n; ++i) {
    std::string value = std::to_string(i);
    std::optional<std::string_view> cell(value);
    out.data_row(std::span(&cell, 1));
  }
  throw Error(SqlState::division_by_zero, "division by zero");
}

class FakePortal : public Portal {
 public:
  FakePortal(const FakeStatement& statement, std::vector<ParameterValue> params,
             std::vector<Format> formats)
      : statement_(statement), params_(std::move(params)), formats_(std::move(formats)) {
    if (statement_.command.rfind("rows ", 0) == 0) total_ = row_count(statement_.command.substr(5));
    if (statement_.command.rfind("echo", 0) == 0) total_ = 1;
  }
  std::optional<std::vector<FieldDescription>> result_fields() const override {
    auto fields = statement_.result_fields();
    if (fields) {
      for (size_t i = 0; i < fields->size(); ++i) {
        if (!formats_.empty()) (*fields)[i].format = formats_.size() == 1 ? formats_[0] : formats_[i];
      }
    }
    return fields;
  }
  bool execute(uint64_t max_rows, ResultWriter& out) override {
    if (statement_.command == "fail") throw Error(SqlState::syntax_error, "fake failure");
    if (statement_.command.rfind("rowsfail ", 0) == 0) {
      rows_then_fail(row_count(statement_.command.substr(9)), out);
    }
    if (statement_.command == "held") {
      held(out);
      return true;
    }
    auto fields = result_fields();
    if (fields) out.row_description(*fields);  // must be dropped inside Execute
    uint64_t sent = 0;
    while (next_ < total_) {
      if (max_rows > 0 && sent == max_rows) return false;
      std::string value = statement_.command.rfind("echo", 0) == 0
                              ? (params_.empty() ? "no parameter" : params_[0].bytes.value_or("NULL"))
                              : std::to_string(next_);
      std::optional<std::string_view> cell(value);
      out.data_row(std::span(&cell, 1));
      ++next_;
      ++sent;
    }
    out.command_complete(fields ? "SELECT " + std::to_string(total_) : "OK");
    return true;
  }

 private:
  const FakeStatement& statement_;
  std::vector<ParameterValue> params_;
  std::vector<Format> formats_;
  int total_ = 0;
  int next_ = 0;
};

class FakeHandler : public QueryHandler {
 public:
  FakeHandler(const SessionInfo& info, bool allow_wait) : info_(info), allow_wait_(allow_wait) {}

  std::vector<std::pair<std::string, std::string>> initial_parameter_status() override {
    return {{"server_version", "15.0 (fake)"}, {"client_encoding", "UTF8"}};
  }

  void simple_query(std::string_view sql, ResultWriter& out) override {
    if (trim(sql).empty()) {
      out.empty_query();
      return;
    }
    std::stringstream commands{std::string(sql)};
    std::string command;
    while (std::getline(commands, command, ';')) {
      command = trim(command);
      if (command.empty()) continue;
      run(command, out);
    }
  }

  std::unique_ptr<PreparedStatement> prepare(std::string_view sql,
                                             std::span<const uint32_t> param_types) override {
    std::string command = trim(sql);
    if (command == "fail parse") throw Error(SqlState::syntax_error, "fake parse failure");
    size_t count = std::count(command.begin(), command.end(), '$');
    std::vector<uint32_t> types(count, 25);
    for (size_t i = 0; i < std::min(count, param_types.size()); ++i) {
      if (param_types[i] != 0) types[i] = param_types[i];
    }
    return std::make_unique<FakeStatement>(command, types);
  }

  std::unique_ptr<Portal> bind(PreparedStatement& statement,
                               std::span<const ParameterValue> parameters,
                               std::span<const Format> result_formats) override {
    auto& fake = dynamic_cast<FakeStatement&>(statement);
    return std::make_unique<FakePortal>(
        fake, std::vector<ParameterValue>(parameters.begin(), parameters.end()),
        std::vector<Format>(result_formats.begin(), result_formats.end()));
  }

  TransactionStatus transaction_status() const override { return status_; }
  void on_error() override {
    if (status_ == TransactionStatus::in_block) status_ = TransactionStatus::failed;
  }
  void sync() override { ++syncs; }

  int syncs = 0;

 private:
  void run(const std::string& command, ResultWriter& out) {
    if (command.rfind("rows ", 0) == 0) {
      int n = row_count(command.substr(5));
      FieldDescription field = int4_field("n");
      out.row_description(std::span(&field, 1));
      for (int i = 0; i < n; ++i) {
        std::string value = std::to_string(i);
        std::optional<std::string_view> cell(value);
        out.data_row(std::span(&cell, 1));
      }
      out.command_complete("SELECT " + std::to_string(n));
    } else if (command.rfind("rowsfail ", 0) == 0) {
      FieldDescription field = int4_field("n");
      out.row_description(std::span(&field, 1));
      rows_then_fail(row_count(command.substr(9)), out);
    } else if (command == "held") {
      held(out);
    } else if (command == "fail") {
      throw Error(SqlState::syntax_error, "fake failure");
    } else if (command == "fatal") {
      throw Error(SqlState::admin_shutdown, "fake fatal", Severity::fatal);
    } else if (command == "crash") {
      throw std::runtime_error("fake crash");
    } else if (command == "begin") {
      status_ = TransactionStatus::in_block;
      out.command_complete("BEGIN");
    } else if (command == "commit") {
      bool failed = status_ == TransactionStatus::failed;
      status_ = TransactionStatus::idle;
      out.command_complete(failed ? "ROLLBACK" : "COMMIT");
    } else if (command == "notice") {
      out.notice(Error(SqlState::warning, "fake notice", Severity::notice));
      out.command_complete("NOTICE");
    } else if (command == "setting") {
      out.parameter_status("application_name", "changed");
      out.command_complete("SET");
    } else if (command == "copy in") {
      CopyInReader& in = out.copy_in(Format::text, 2);
      size_t bytes = 0;
      while (auto chunk = in.next()) bytes += chunk->size();
      out.command_complete("COPY " + std::to_string(bytes));
    } else if (command == "copy out") {
      out.copy_out_begin(Format::text, 1);
      out.copy_out_data("a\n");
      out.copy_out_data("b\n");
      out.copy_out_end();
      out.command_complete("COPY 2");
    } else if (command == "wait" && allow_wait_) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (std::chrono::steady_clock::now() < deadline) {
        info_.cancel->check();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      out.command_complete("WAITED");
    } else {
      throw Error(SqlState::feature_not_supported, "fake handler: unknown command " + command);
    }
  }

  SessionInfo info_;
  bool allow_wait_;
  TransactionStatus status_ = TransactionStatus::idle;
};

class FakeFactory : public QueryHandlerFactory {
 public:
  std::unique_ptr<QueryHandler> create(const SessionInfo& session) override {
    ++created;
    if (session.database == "broken") {
      throw Error(SqlState::invalid_catalog_name, "database \"broken\" does not exist",
                  Severity::fatal);
    }
    return std::make_unique<FakeHandler>(session, allow_wait);
  }
  int created = 0;
  // The fuzzer turns "wait" off: a mutated stream must never hang.
  bool allow_wait = true;
};

}  // namespace tally::protocol::testing
