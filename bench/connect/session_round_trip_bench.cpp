// In-process cost of one client round trip through the protocol session, with
// no sockets and no client: the same bytes pgbench sends, replayed from memory
// into protocol::ProtocolSession, against
//   * the framing-only fake handler (tests/protocol/fake_handler.hpp): the
//     protocol layer's own cost, the floor;
//   * the real SQL session (executor::Database's handler, catalog wrapper
//     included), with the same text every time (what pgbench -M simple and
//     -M extended, JDBC's unnamed Parse, and applications' fixed statements
//     send; the parse and analysis caches hit);
//   * the real SQL session with a different text every time (a comment with
//     a counter: every cache misses), the cost without the caches;
//   * the same-text SQL session wrapped in tallyd's query log
//     (server/metrics_query_log.hpp) with log_statement=scans (tallyd's
//     default: SELECT 1 writes no line), and with log_statement=all writing a
//     line per statement to a file, once with one write(2) per line (the
//     default sink) and once through server/buffered_log_sink.hpp.
//
//   session_round_trip_bench [--round-trips N] [--repeats R] [--mode simple|extended|prepared]
//
// (--mode runs one protocol's rows only, e.g. under perf record.)
//
// Prints round trips per second and microseconds per round trip (best of R
// runs), and the ratio to the framing-only floor measured in the same run.
// Every run checks its answers: one DataRow ("1"; the fake handler's "0") and
// one ReadyForQuery per round trip, and no ErrorResponse.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdlib>
#include <fcntl.h>
#include <unistd.h>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "executor/database.hpp"
#include "executor/parser.hpp"
#include "executor/table_provider.hpp"
#include "protocol/frontend_messages.hpp"
#include "protocol/protocol_session.hpp"
#include "server/buffered_log_sink.hpp"
#include "server/metrics_query_log.hpp"
#include "common/log.hpp"
#include "tests/protocol/client_script.hpp"
#include "tests/protocol/fake_handler.hpp"
#include "tests/protocol/scripted_stream.hpp"

namespace tally {
namespace {

namespace fe = protocol::frontend;
using Clock = std::chrono::steady_clock;

// Feeds the session the startup packet, then `count` round trips produced by
// `round_trip(i)`, then EOF; counts what comes back as it is written.
class ReplayStream : public protocol::ByteStream {
 public:
  // expected: the one-column DataRow every round trip must answer.
  ReplayStream(std::string startup, std::function<std::string(size_t)> round_trip, size_t count, char expected)
      : pending_(std::move(startup)), round_trip_(std::move(round_trip)), count_(count), expected_row_({0, 1, 0, 0, 0, 1, expected}) {}

  size_t read_some(std::span<char> buffer) override {
    if (pos_ == pending_.size()) {
      if (next_ == count_) return 0;
      pending_ = round_trip_(next_++);
      pos_ = 0;
    }
    const size_t n = std::min(buffer.size(), pending_.size() - pos_);
    std::memcpy(buffer.data(), pending_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  // Walks the backend messages (they may be split across writes).
  void write_all(std::string_view bytes) override {
    partial_.append(bytes);
    size_t at = 0;
    while (partial_.size() - at >= 5) {
      const auto* p = reinterpret_cast<const unsigned char*>(partial_.data() + at);
      const size_t length = (size_t{p[1]} << 24) | (size_t{p[2]} << 16) | (size_t{p[3]} << 8) | p[4];
      if (partial_.size() - at < 1 + length) break;
      const char type = partial_[at];
      const std::string_view body(partial_.data() + at + 5, length - 4);
      if (type == 'Z') ++ready_;
      if (type == 'E') ++errors_;
      // DataRow of one column: count 1, length 1, the expected character.
      if (type == 'D' && body == expected_row_) ++ones_;
      at += 1 + length;
    }
    partial_.erase(0, at);
  }
  bool peer_is_loopback() const override { return true; }
  std::string peer_host() const override { return "127.0.0.1"; }

  size_t ready() const { return ready_; }
  size_t errors() const { return errors_; }
  size_t ones() const { return ones_; }

 private:
  std::string pending_;
  size_t pos_ = 0;
  std::function<std::string(size_t)> round_trip_;
  size_t count_;
  size_t next_ = 0;
  std::string expected_row_;
  std::string partial_;
  size_t ready_ = 0, errors_ = 0, ones_ = 0;
};

struct Mode {
  const char* name;
  std::function<std::string(size_t)> fake;     // the same exchange for the fake handler
  std::function<std::string(size_t)> sql;      // same text every time
  std::function<std::string(size_t)> distinct; // a new text every time
};

std::string simple(const std::string& sql) { return fe::encode(fe::Query{sql}); }
// pgbench -M extended: Parse of the unnamed statement, Bind, Describe portal, Execute, Sync.
std::string extended(const std::string& sql) {
  return protocol::testing::encode_messages(
      {fe::Parse{"", sql, {}}, fe::Bind{"", "", {}, {}, {}}, fe::Describe{'P', ""}, fe::Execute{"", 0}, fe::Sync{}});
}
// pgbench -M prepared after the first round trip: Bind, Describe portal, Execute, Sync of "s".
std::string prepared(const std::string& sql, size_t i) {
  std::string out;
  if (i == 0) out = fe::encode(fe::Parse{"s", sql, {}});
  return out + protocol::testing::encode_messages(
                   {fe::Bind{"", "s", {}, {}, {}}, fe::Describe{'P', ""}, fe::Execute{"", 0}, fe::Sync{}});
}
std::string numbered(size_t i) { return "SELECT 1 /* " + std::to_string(i) + " */"; }

struct Measurement {
  double seconds = 0;
  bool ok = false;
};

// The fake handler's "rows 1" answers 0; SELECT 1 answers 1.
Measurement run_once(const config::Config& config, tally::QueryHandlerFactory& factory,
                     const std::function<std::string(size_t)>& round_trip, size_t count, char expected) {
  protocol::testing::FakeHost host;
  ReplayStream stream(protocol::testing::startup_packet("tally", "tally", "bench"), round_trip, count, expected);
  protocol::ProtocolSession session(config, factory, host, stream);
  const auto started = Clock::now();
  session.run();
  Measurement m;
  m.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  // One ReadyForQuery after startup, then one per round trip.
  m.ok = stream.errors() == 0 && stream.ready() == count + 1 && stream.ones() == count;
  if (!m.ok) {
    std::fprintf(stderr, "wrong answers: %zu ReadyForQuery, %zu DataRow '%c', %zu errors for %zu round trips\n",
                 stream.ready(), stream.ones(), expected, stream.errors(), count);
  }
  return m;
}

double best_seconds(const config::Config& config, tally::QueryHandlerFactory& factory,
                    const std::function<std::string(size_t)>& round_trip, size_t count, int repeats, bool& ok,
                    char expected = '1') {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    Measurement m = run_once(config, factory, round_trip, count, expected);
    ok = ok && m.ok;
    best = std::min(best, m.seconds);
  }
  return best;
}

int main_impl(int argc, char** argv) {
  size_t count = 20000;
  int repeats = 5;
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--round-trips") == 0) count = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--mode") == 0) only = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--round-trips N] [--repeats R] [--mode simple|extended|prepared]\n", argv[0]);
      return 2;
    }
  }
  config::Config config;
  config.gpu_device = -2;  // the session path only: no GPU engine
  auto database = executor::Database::open_with_tables(config, std::make_unique<executor::MemoryTableProvider>());
  protocol::testing::FakeFactory fake;
  // tallyd's decorator around the same SQL session, logging into an unlinked
  // temporary file (what tallyd's stderr usually is: a file or a pipe).
  server::QueryLogFactory logged(database->handler_factory());
  char log_path[] = "/tmp/session_round_trip_bench_log_XXXXXX";
  const int log_fd = ::mkstemp(log_path);
  if (log_fd < 0) {
    std::perror("mkstemp");
    return 2;
  }
  ::unlink(log_path);
  log::set_sink([](std::string_view) {});  // rows without the query log print nothing

  const std::vector<Mode> modes = {
      {"simple", [](size_t) { return simple("rows 1"); }, [](size_t) { return simple("SELECT 1"); },
       [](size_t i) { return simple(numbered(i)); }},
      {"extended", [](size_t) { return extended("rows 1"); }, [](size_t) { return extended("SELECT 1"); },
       [](size_t i) { return extended(numbered(i)); }},
      {"prepared", [](size_t i) { return prepared("rows 1", i); }, [](size_t i) { return prepared("SELECT 1", i); },
       nullptr},
  };

  std::printf("session round trips in process, %zu per run, best of %d (%s)\n", count, repeats,
              "framing-only fake handler vs the SQL session");
  std::printf("%-9s | %-28s | %12s | %9s | %8s\n", "protocol", "handler", "round trips/s", "us each", "x floor");
  std::printf("----------------------------------------------------------------------------\n");
  bool ok = true;
  for (const auto& mode : modes) {
    if (!only.empty() && only != mode.name) continue;
    const double floor = best_seconds(config, fake, mode.fake, count, repeats, ok, '0');
    auto row = [&](const char* handler, double seconds) {
      std::printf("%-9s | %-28s | %12.0f | %9.2f | %8.2f\n", mode.name, handler, count / seconds, seconds / count * 1e6,
                  seconds / floor);
    };
    row("framing only (floor)", floor);
    row("SQL, same text", best_seconds(config, database->handler_factory(), mode.sql, count, repeats, ok));
    if (mode.distinct) {
      row("SQL, new text each time", best_seconds(config, database->handler_factory(), mode.distinct, count, repeats, ok));
    }
    server::set_log_statement(config::LogStatement::scans);
    row("+ query log, no line", best_seconds(config, logged, mode.sql, count, repeats, ok));
    server::set_log_statement(config::LogStatement::all);
    log::set_sink([fd = log_fd](std::string_view line) {
      // The default sink's way: one write(2) per line (to a file, not a tty).
      if (::write(fd, line.data(), line.size()) < 0) std::abort();
    });
    row("+ line each, write per line", best_seconds(config, logged, mode.sql, count, repeats, ok));
    {
      server::BufferedLogSink buffered(log_fd);
      buffered.install();
      row("+ line each, buffered sink", best_seconds(config, logged, mode.sql, count, repeats, ok));
      buffered.stop();
    }
    log::set_sink([](std::string_view) {});  // connection lines of the next rows
  }
  ::close(log_fd);
  const auto stats = executor::parse_cache_stats();
  std::printf("parse cache: %llu hits, %llu misses, %zu entries\n", static_cast<unsigned long long>(stats.hits),
              static_cast<unsigned long long>(stats.misses), stats.entries);
  if (!ok) {
    std::printf("FAILED: some answers were wrong (see above)\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tally

int main(int argc, char** argv) { return tally::main_impl(argc, argv); }
