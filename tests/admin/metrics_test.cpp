// The metrics registry and its Prometheus text exposition.
#include "server/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

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

TEST(Metrics, NamedMetricsMoveInTheGlobalRegistry) {
  auto before = parse_exposition(global().exposition());
  queries_total(QueryOutcome::ok).inc();
  queries_total(QueryOutcome::timeout).inc(2);
  query_duration_seconds(Engine::gpu).observe(0.003);
  rows_scanned_total(Engine::cpu).inc(1000);
  bytes_scanned_total(Engine::cpu).inc(8000);
  connections_total().inc();
  connections_active().inc();
  column_cache_hits_total().inc(3);
  column_cache_misses_total().inc(1);
  tuner_explorations_total().inc();
  tuning_cache_entries().set(12);
  gpu_memory_used_bytes().set(1 << 20);
  auto after = parse_exposition(global().exposition());
  auto delta = [&](const std::string& key) { return after.at(key) - (before.count(key) ? before.at(key) : 0); };
  EXPECT_EQ(delta("tally_queries_total{outcome=\"ok\"}"), 1);
  EXPECT_EQ(delta("tally_queries_total{outcome=\"timeout\"}"), 2);
  EXPECT_EQ(delta("tally_queries_total{outcome=\"error\"}"), 0);
  EXPECT_EQ(delta("tally_query_duration_seconds_bucket{engine=\"gpu\",le=\"0.005\"}"), 1);
  EXPECT_EQ(delta("tally_query_duration_seconds_bucket{engine=\"gpu\",le=\"0.0025\"}"), 0);
  EXPECT_EQ(delta("tally_rows_scanned_total{engine=\"cpu\"}"), 1000);
  EXPECT_EQ(delta("tally_bytes_scanned_total{engine=\"cpu\"}"), 8000);
  EXPECT_EQ(delta("tally_connections_total"), 1);
  EXPECT_EQ(delta("tally_tuner_explorations_total"), 1);
  EXPECT_EQ(after.at("tally_tuning_cache_entries"), 12);
  EXPECT_EQ(after.at("tally_gpu_memory_used_bytes"), 1 << 20);
  EXPECT_DOUBLE_EQ(after.at("tally_column_cache_hit_ratio"),
                   after.at("tally_column_cache_hits_total") /
                       (after.at("tally_column_cache_hits_total") + after.at("tally_column_cache_misses_total")));
  EXPECT_GT(after.at("tally_process_start_time_seconds"), 1.6e9);
}

}  // namespace
}  // namespace tally::metrics
