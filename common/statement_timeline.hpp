#pragma once
// One statement's server-side timeline: where a query's time goes outside
// the engine (issue 5: between the executor's Execution Time and the first
// DataRow on the wire). protocol/ stamps the message's receipt, the first
// flush that carries a DataRow and ReadyForQuery; executor/ stamps its own
// start and end and the moment the result is ready to stream. A session runs
// a statement on one thread, so the timeline is thread-local.
//
// Off unless the session host asks for it (tallyd: at log level debug, where
// it becomes a "statement_timeline" line): then each stamp is one test of a
// thread-local flag and costs no clock read.
#include <array>
#include <chrono>
#include <cstddef>

namespace tally {

struct StatementTimeline {
  using Clock = std::chrono::steady_clock;
  enum Point : size_t {
    received,          // Query or Execute message read
    parsed,            // simple Query: the text's parse trees are in hand (parse cache or libpg_query)
    analyzed,          // simple Query: the statement is bound and planned (analysis cache or a new plan)
    executor_start,    // the SELECT's executor began (run_select; CREATE TABLE AS: its query)
    executor_end,      // ... and ended: where EXPLAIN ANALYZE's Execution Time stops
    table_created,     // CREATE TABLE AS: its query ran and the table exists (uncommitted)
    rows_written,      // ... its rows are staged, encoded and written to chunk files
    files_synced,      // ... the files and their directories are synced (a commit's first round)
    committed,         // ... the catalog committed (its second: SQLite's WAL synced)
    result_ready,      // the statement returned its result set, ready to stream
    first_data_row,    // the first write(2) that carried a DataRow returned
    statement_done,    // CommandComplete written into the output buffer
    ready_for_query,   // ReadyForQuery flushed
    point_count
  };
  static constexpr std::array<const char*, point_count> names = {
      "received", "parsed", "analyzed", "executor_start", "executor_end", "table_created", "rows_written", "files_synced", "committed",
      "result_ready", "first_data_row", "statement_done", "ready_for_query"};

  bool enabled = false;
  // DataRows were appended to the output since the last flush, and
  // first_data_row is not stamped yet: the next flush stamps it.
  bool rows_buffered = false;
  std::array<Clock::time_point, point_count> at{};

  // Starts a statement's timeline (all points cleared), stamping `received`.
  void begin(bool on) {
    enabled = on;
    rows_buffered = false;
    at.fill(Clock::time_point{});
    stamp(received);
  }
  void stamp(Point p) {
    if (enabled) at[p] = Clock::now();
  }
  bool has(Point p) const { return at[p] != Clock::time_point{}; }
  // A DataRow went into the output buffer.
  void row_buffered() {
    if (enabled && !has(first_data_row)) rows_buffered = true;
  }
  // The output buffer was written to the socket.
  void flushed() {
    if (rows_buffered) {
      rows_buffered = false;
      stamp(first_data_row);
    }
  }
  // Microseconds from `received` to p; negative when p was not stamped.
  double offset_us(Point p) const {
    if (!has(p) || !has(received)) return -1;
    return std::chrono::duration<double, std::micro>(at[p] - at[received]).count();
  }
};

inline StatementTimeline& statement_timeline() {
  thread_local StatementTimeline timeline;
  return timeline;
}

}  // namespace tally
