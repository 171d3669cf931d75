#pragma once
// Scripted protocol sessions with the real SQL session (executor::Database's
// handler) behind protocol::ProtocolSession: the bytes a client would send in, every
// backend message out. The host records what statement_timeout asked of it.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "executor/database.hpp"
#include "executor/table_provider.hpp"
#include "protocol/backend_messages.hpp"
#include "protocol/protocol_session.hpp"
#include "tests/protocol/client_script.hpp"
#include "tests/protocol/scripted_stream.hpp"

namespace tally::protocol::testing {

// Records every statement deadline: milliseconds from the call when armed,
// nullopt when disarmed.
class TimerRecordingHost : public FakeHost {
 public:
  void set_statement_deadline(CancelToken&, std::optional<std::chrono::steady_clock::time_point> deadline) override {
    if (!deadline) {
      calls.push_back(std::nullopt);
      return;
    }
    calls.push_back(
        std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now()).count());
  }
  std::vector<std::optional<int64_t>> calls;

  // Statement timelines, kept when `keep_timelines` is set.
  bool wants_statement_timeline() override { return keep_timelines; }
  void statement_timeline(int32_t, const StatementTimeline& timeline) override { timelines.push_back(timeline); }
  bool keep_timelines = false;
  std::vector<StatementTimeline> timelines;
};

class SqlSessionHarness {
 public:
  // with_storage: a real catalog and table store in a temporary directory
  // (CREATE TABLE, INSERT); otherwise an empty in-memory table provider.
  explicit SqlSessionHarness(bool with_storage, uint64_t statement_timeout_ms = 0) {
    config.statement_timeout_ms = statement_timeout_ms;
    config.gpu_device = -2;
    if (with_storage) {
      char pattern[] = "/tmp/tally-protocol-sql-XXXXXX";
      data_dir_ = mkdtemp(pattern);
      config.data_dir = data_dir_;
      database = executor::Database::open(config);
    } else {
      database = executor::Database::open_with_tables(config, std::make_unique<executor::MemoryTableProvider>());
    }
  }
  // Over the given in-memory tables.
  explicit SqlSessionHarness(std::unique_ptr<executor::TableProvider> tables) {
    config.gpu_device = -2;
    database = executor::Database::open_with_tables(config, std::move(tables));
  }
  ~SqlSessionHarness() {
    database.reset();
    if (!data_dir_.empty()) std::filesystem::remove_all(data_dir_);
  }

  // Runs one connection: trust startup, the script, Terminate.
  std::vector<backend::Message> run(const std::string& script) { return run_parts({script}, {}); }
  // The same, sending the parts one after the other with a pause between
  // (each when the server has consumed the previous one).
  std::vector<backend::Message> run_parts(std::vector<std::string> parts, std::chrono::milliseconds pause) {
    return backend::decode_all(run_raw(std::move(parts), pause).output);
  }
  // The same, returning the stream: its output and where each write ended.
  ScriptedStream run_raw(std::vector<std::string> parts, std::chrono::milliseconds pause = {}) {
    ScriptedStream stream(startup_packet("tally", "tally", "sql-session-test") + parts.at(0));
    size_t next = 1;
    stream.set_responder([&](const std::string&) -> std::string {
      if (next > parts.size()) return "";
      std::this_thread::sleep_for(pause);
      return next < parts.size() ? parts[next++] : (++next, frontend::encode(frontend::Terminate{}));
    });
    ProtocolSession session(config, database->handler_factory(), host, stream);
    session.run();
    stream.set_responder(nullptr);  // it refers to this frame's locals
    return stream;
  }

  config::Config config;
  std::unique_ptr<executor::Database> database;
  TimerRecordingHost host;

 private:
  std::string data_dir_;
};

// The first column of every DataRow ("NULL" for NULL) and "error <SQLSTATE>"
// for every ErrorResponse, in order.
inline std::vector<std::string> first_values(const std::vector<backend::Message>& messages) {
  std::vector<std::string> values;
  for (const auto& m : messages) {
    if (auto* row = std::get_if<backend::DataRow>(&m)) values.push_back(row->values.at(0).value_or("NULL"));
    if (auto* error = std::get_if<backend::ErrorResponse>(&m)) values.push_back("error " + error->field('C'));
  }
  return values;
}

// Every DataRow as "v1|v2|..." ("NULL" for NULL) and "error <SQLSTATE>" for
// every ErrorResponse, in order.
inline std::vector<std::string> rows_text(const std::vector<backend::Message>& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) {
    if (auto* row = std::get_if<backend::DataRow>(&m)) {
      std::string text;
      for (size_t i = 0; i < row->values.size(); ++i) text += (i ? "|" : "") + row->values[i].value_or("NULL");
      out.push_back(text);
    }
    if (auto* error = std::get_if<backend::ErrorResponse>(&m)) out.push_back("error " + error->field('C'));
  }
  return out;
}

}  // namespace tally::protocol::testing
