// The metrics registry and its Prometheus text exposition.
#include "server/metrics.hpp"

#include "common/engine_counters.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "tests/admin/prometheus_text.hpp"

namespace tally::metrics {
namespace {

using testing_prom::parse_exposition;

TEST(Metrics, CounterGaugeHistogramValuesAppearInTheExposition) {
  Registry r;
  Counter& c = r.counter("t_requests_total", "Requests.", {{"code", "200"}});
  c.inc();
  c.inc(4);
  Gauge& g = r.gauge("t_temperature", "Heat.");
  g.set(20.5);
  g.add(-0.25);
  Histogram& h = r.histogram("t_latency_seconds", "Latency.", {0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 2.0, 20.0}) h.observe(v);
  std::string text = r.exposition();
  auto samples = parse_exposition(text);
  EXPECT_EQ(samples.at("t_requests_total{code=\"200\"}"), 5);
  EXPECT_EQ(samples.at("t_temperature"), 20.25);
  // Cumulative buckets; a value equal to a bound falls in that bucket (le).
  EXPECT_EQ(samples.at("t_latency_seconds_bucket{le=\"0.1\"}"), 2);
  EXPECT_EQ(samples.at("t_latency_seconds_bucket{le=\"1\"}"), 3);
  EXPECT_EQ(samples.at("t_latency_seconds_bucket{le=\"10\"}"), 4);
  EXPECT_EQ(samples.at("t_latency_seconds_bucket{le=\"+Inf\"}"), 5);
  EXPECT_EQ(samples.at("t_latency_seconds_count"), 5);
  EXPECT_DOUBLE_EQ(samples.at("t_latency_seconds_sum"), 22.65);
  EXPECT_NE(text.find("# TYPE t_requests_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE t_latency_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("# HELP t_temperature Heat.\n"), std::string::npos);
}

TEST(Metrics, SameNameAndLabelsIsTheSameSeries) {
  Registry r;
  Counter& a = r.counter("t_total", "x", {{"b", "2"}, {"a", "1"}});
  Counter& b = r.counter("t_total", "x", {{"a", "1"}, {"b", "2"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &r.counter("t_total", "x", {{"a", "other"}}));
  EXPECT_THROW(r.gauge("t_total", "x"), std::logic_error);
  EXPECT_THROW(r.counter("1bad", "x"), std::logic_error);
  r.histogram("t_h", "x", {1, 2});
  EXPECT_THROW(r.histogram("t_h", "x", {1, 3}), std::logic_error);
  EXPECT_THROW(Histogram({2, 1}), std::logic_error);
}

TEST(Metrics, LabelValuesAreEscaped) {
  Registry r;
  r.counter("t_total", "x", {{"q", "a\"b\\c\nd"}}).inc();
  EXPECT_NE(r.exposition().find(R"(t_total{q="a\"b\\c\nd"} 1)"), std::string::npos) << r.exposition();
}

TEST(Metrics, CallbackGaugesAreReadAtScrape) {
  Registry r;
  double value = 1;
  r.gauge_callback("t_live", "x", [&] { return value; });
  EXPECT_EQ(parse_exposition(r.exposition()).at("t_live"), 1);
  value = 7.5;
  EXPECT_EQ(parse_exposition(r.exposition()).at("t_live"), 7.5);
}

TEST(Metrics, ConcurrentUpdatesAreExact) {
  Registry r;
  Counter& c = r.counter("t_total", "x");
  Gauge& g = r.gauge("t_g", "x");
  Histogram& h = r.histogram("t_h", "x", {0.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        c.inc();
        g.add(1);
        h.observe(i % 2 ? 1.0 : 0.25);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value(), 160000u);
  EXPECT_EQ(g.value(), 160000.0);
  EXPECT_EQ(h.count(), 160000u);
  EXPECT_EQ(h.bucket_count(0), 80000u);
  EXPECT_DOUBLE_EQ(h.sum(), 80000 * 1.25);
}

TEST(Metrics, FormatValue) {
  EXPECT_EQ(format_value(0.1), "0.1");
  EXPECT_EQ(format_value(1e-9), "1e-09");
  EXPECT_EQ(format_value(3), "3");
  EXPECT_EQ(format_value(INFINITY), "+Inf");
  EXPECT_EQ(format_value(-INFINITY), "-Inf");
  EXPECT_EQ(format_value(NAN), "NaN");
}

TEST(Metrics, CallbackCountersAreReadAtScrapeAndKeepTheirType) {
  Registry r;
  uint64_t value = 5;
  r.counter_callback("t_cb_total", "x", [&] { return value; }, {{"engine", "cpu"}});
  auto text = r.exposition();
  EXPECT_NE(text.find("# TYPE t_cb_total counter\n"), std::string::npos) << text;
  EXPECT_EQ(parse_exposition(text).at("t_cb_total{engine=\"cpu\"}"), 5);
  value = 1ull << 40;  // larger than a double's exact integers would still print exactly here
  EXPECT_NE(r.exposition().find("t_cb_total{engine=\"cpu\"} 1099511627776\n"), std::string::npos);
  // One series is either stored or read, never both.
  EXPECT_THROW(r.counter("t_cb_total", "x", {{"engine", "cpu"}}), std::logic_error);
  r.counter("t_stored_total", "x");
  EXPECT_THROW(r.counter_callback("t_stored_total", "x", [] { return uint64_t(0); }), std::logic_error);
}

TEST(Metrics, NamedMetricsMoveInTheGlobalRegistry) {
  auto before = parse_exposition(global().exposition());
  queries_total(QueryOutcome::ok).inc();
  queries_total(QueryOutcome::timeout).inc(2);
  query_duration_seconds(Engine::gpu).observe(0.003);
  connections_total().inc();
  connections_active().inc();
  gpu_memory_total_bytes().set(80e9);
  auto after = parse_exposition(global().exposition());
  auto delta = [&](const std::string& key) { return after.at(key) - (before.count(key) ? before.at(key) : 0); };
  EXPECT_EQ(delta("tally_queries_total{outcome=\"ok\"}"), 1);
  EXPECT_EQ(delta("tally_queries_total{outcome=\"timeout\"}"), 2);
  EXPECT_EQ(delta("tally_queries_total{outcome=\"error\"}"), 0);
  EXPECT_EQ(delta("tally_query_duration_seconds_bucket{engine=\"gpu\",le=\"0.005\"}"), 1);
  EXPECT_EQ(delta("tally_query_duration_seconds_bucket{engine=\"gpu\",le=\"0.0025\"}"), 0);
  EXPECT_EQ(delta("tally_connections_total"), 1);
  EXPECT_EQ(after.at("tally_gpu_memory_total_bytes"), 80e9);
  EXPECT_GT(after.at("tally_process_start_time_seconds"), 1.6e9);
}

// The engine's counters (common/engine_counters.hpp) are what the query path
// increments; /metrics reads them when scraped.
TEST(Metrics, EngineCountersAppearInTheGlobalRegistry) {
  auto before = parse_exposition(global().exposition());
  EngineCounters& c = engine_counters();
  count_scan(1000, 8000);
  count(c.gpu_aggregations);
  count(c.cpu_aggregations, 2);
  count(c.gpu_cache_hits, 3);
  count(c.gpu_cache_misses, 1);
  count(c.gpu_bytes_transferred, 4096);
  count(c.tuner_measurements, 5);
  count(c.tuner_explorations);
  count(c.tuning_cache_writes, 2);
  c.gpu_memory_used_bytes.store(1 << 20);
  c.gpu_cache_bytes.store(1 << 19);
  auto after = parse_exposition(global().exposition());
  auto delta = [&](const std::string& key) { return after.at(key) - (before.count(key) ? before.at(key) : 0); };
  EXPECT_EQ(delta("tally_rows_scanned_total"), 1000);
  EXPECT_EQ(delta("tally_bytes_scanned_total"), 8000);
  EXPECT_EQ(delta("tally_aggregations_total{engine=\"gpu\"}"), 1);
  EXPECT_EQ(delta("tally_aggregations_total{engine=\"cpu\"}"), 2);
  EXPECT_EQ(delta("tally_column_cache_hits_total"), 3);
  EXPECT_EQ(delta("tally_column_cache_misses_total"), 1);
  EXPECT_EQ(delta("tally_gpu_bytes_transferred_total"), 4096);
  EXPECT_EQ(delta("tally_tuner_measurements_total"), 5);
  EXPECT_EQ(delta("tally_tuner_explorations_total"), 1);
  EXPECT_EQ(delta("tally_tuning_cache_writes_total"), 2);
  EXPECT_EQ(after.at("tally_gpu_memory_used_bytes"), 1 << 20);
  EXPECT_EQ(after.at("tally_column_cache_bytes"), 1 << 19);
  EXPECT_DOUBLE_EQ(after.at("tally_column_cache_hit_ratio"),
                   after.at("tally_column_cache_hits_total") /
                       (after.at("tally_column_cache_hits_total") + after.at("tally_column_cache_misses_total")));
  // This thread's statement trace saw the scan too.
  EXPECT_GE(statement_trace().rows_scanned.load(), 1000u);
}

// A chunk read by another thread for the statement (read-ahead, a parallel
// part) counts in the statement's trace: that thread runs under it.
TEST(Metrics, ScansOnOtherThreadsCountInTheStatementsTrace) {
  const uint64_t before = statement_trace().rows_scanned.load();
  const auto trace = current_statement_trace();
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([trace] {
      const StatementTraceScope scope(trace);
      for (int chunk = 0; chunk < 100; ++chunk) count_scan(10, 80);
    });
  }
  for (auto& r : readers) r.join();
  EXPECT_EQ(statement_trace().rows_scanned.load() - before, 4000u);
  // A thread without the scope keeps its own.
  std::thread([] { count_scan(7, 7); }).join();
  EXPECT_EQ(statement_trace().rows_scanned.load() - before, 4000u);
}

TEST(Metrics, TuningCacheEntriesReadTheSourceTallydSets) {
  set_tuning_cache_entries_source([] { return 12.0; });
  EXPECT_EQ(parse_exposition(global().exposition()).at("tally_tuning_cache_entries"), 12);
  set_tuning_cache_entries_source([] { return 0.0; });
  EXPECT_EQ(parse_exposition(global().exposition()).at("tally_tuning_cache_entries"), 0);
}

}  // namespace
}  // namespace tally::metrics
