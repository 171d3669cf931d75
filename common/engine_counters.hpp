#pragma once
// Process-wide counters the query path increments and the admin endpoint's
// /metrics reads (server/metrics*). They live in common/ because the layers
// that count (executor/, storage/, gpu/) sit below server/ and must not
// depend on it. One relaxed atomic add per event; read when scraped.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tally {

struct EngineCounters {
  // Scans (executor/ table scans: the rows of the chunks they read, those
  // skipped by their min/max left out).
  std::atomic<uint64_t> rows_scanned{0};
  std::atomic<uint64_t> bytes_scanned{0};
  // Aggregations by the engine that ran them.
  std::atomic<uint64_t> cpu_aggregations{0};
  std::atomic<uint64_t> gpu_aggregations{0};
  // The GPU's device column cache (gpu/): chunk-column look-ups and bytes.
  std::atomic<uint64_t> gpu_cache_hits{0};
  std::atomic<uint64_t> gpu_cache_misses{0};
  std::atomic<uint64_t> gpu_cache_bytes{0};         // resident now
  std::atomic<uint64_t> gpu_bytes_transferred{0};   // host-to-device copies
  std::atomic<uint64_t> gpu_memory_used_bytes{0};   // pool + cache, now
  // The tuner (gpu/tuner): configurations measured, explorations of a
  // non-best variant, and entries written to the tuning cache.
  std::atomic<uint64_t> tuner_measurements{0};
  std::atomic<uint64_t> tuner_explorations{0};
  std::atomic<uint64_t> tuning_cache_writes{0};
};

// The one instance of the process.
inline EngineCounters& engine_counters() {
  static EngineCounters counters;
  return counters;
}

inline void count(std::atomic<uint64_t>& counter, uint64_t n = 1) { counter.fetch_add(n, std::memory_order_relaxed); }

// What the statement running on this thread did, for its log line (tallyd's
// query log, server/metrics_query_log.hpp). A session runs its statements on
// one thread, so the log resets this before a statement and reads it after.
// Chunks are also read by pool tasks (read-ahead, parallel parts): those run
// under their caller's trace (StatementTraceScope), so the scan counts are
// atomic; engine and variant are set on the session's thread only.
struct StatementTrace {
  std::atomic<uint64_t> rows_scanned{0};
  std::atomic<uint64_t> bytes_scanned{0};
  std::string engine;   // AggregationReport::engine ("cpu", "gpu"); empty: none ran
  std::string variant;  // AggregationReport::variant
  // AggregationReport::details (EXPLAIN ANALYZE's engine lines), kept only
  // while the log is at level debug, which logs them with the statement.
  std::vector<std::string> details;
};

namespace detail {
inline std::shared_ptr<StatementTrace>& statement_trace_slot() {
  thread_local std::shared_ptr<StatementTrace> trace;
  return trace;
}
}  // namespace detail

// This thread's statement trace: its own, or the one a StatementTraceScope installed.
inline StatementTrace& statement_trace() {
  auto& trace = detail::statement_trace_slot();
  if (!trace) trace = std::make_shared<StatementTrace>();
  return *trace;
}

// What a pool task captures to run under its caller's statement trace.
inline std::shared_ptr<StatementTrace> current_statement_trace() {
  statement_trace();
  return detail::statement_trace_slot();
}

class StatementTraceScope {
 public:
  explicit StatementTraceScope(std::shared_ptr<StatementTrace> trace)
      : previous_(std::exchange(detail::statement_trace_slot(), std::move(trace))) {}
  ~StatementTraceScope() { detail::statement_trace_slot() = std::move(previous_); }
  StatementTraceScope(const StatementTraceScope&) = delete;
  StatementTraceScope& operator=(const StatementTraceScope&) = delete;

 private:
  std::shared_ptr<StatementTrace> previous_;
};

// One scanned chunk: the process-wide counters and this thread's statement.
inline void count_scan(uint64_t rows, uint64_t bytes) {
  count(engine_counters().rows_scanned, rows);
  count(engine_counters().bytes_scanned, bytes);
  StatementTrace& trace = statement_trace();
  trace.rows_scanned += rows;
  trace.bytes_scanned += bytes;
}

// An aggregation finished: call on the statement's thread with the run's
// AggregationReport engine and variant (the engines count cpu_aggregations /
// gpu_aggregations themselves; this only labels the statement's log line),
// and its detail lines when the log wants them (keep_details).
inline void note_aggregation(std::string_view engine, std::string_view variant,
                             const std::vector<std::string>* details = nullptr) {
  StatementTrace& trace = statement_trace();
  trace.engine = engine;
  trace.variant = variant;
  if (details != nullptr) trace.details.insert(trace.details.end(), details->begin(), details->end());
}

}  // namespace tally
