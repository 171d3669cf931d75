#pragma once
// Process metrics in Prometheus' data model, exposed at the admin endpoint's
// /metrics in the text exposition format (version 0.0.4).
//
// Updating a metric is one relaxed atomic operation on an object whose address
// never changes, so hot paths keep a reference:
//   static auto& ok = metrics::queries_total(metrics::QueryOutcome::ok);
//   ok.inc();
// Creating or looking up a series takes the registry's mutex: do it once.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tally::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void inc(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double d);
  void inc() { add(1); }
  void dec() { add(-1); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Cumulative histogram with fixed upper bounds (plus +Inf), as Prometheus wants.
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double v);
  const std::vector<double>& upper_bounds() const { return bounds_; }
  // Non-cumulative count of bucket i (i == upper_bounds().size() is +Inf).
  uint64_t bucket_count(size_t i) const { return counts_[i].load(std::memory_order_relaxed); }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0};
};

enum class MetricType { counter, gauge, histogram };

class Registry {
 public:
  // Get-or-create. The same name must keep its type, help and bucket bounds;
  // a mismatch is a programming error (std::logic_error).
  Counter& counter(const std::string& name, const std::string& help, Labels labels = {});
  Gauge& gauge(const std::string& name, const std::string& help, Labels labels = {});
  Histogram& histogram(const std::string& name, const std::string& help,
                       const std::vector<double>& upper_bounds, Labels labels = {});
  // A gauge read when scraped (a cache's current size, a derived ratio). The
  // function runs under the registry's lock: it must not call the registry.
  void gauge_callback(const std::string& name, const std::string& help,
                      std::function<double()> read, Labels labels = {});
  // A counter whose value lives elsewhere (common/engine_counters.hpp, which
  // layers below server/ increment) and is read when scraped. Same rule: the
  // function runs under the registry's lock and must not call the registry.
  void counter_callback(const std::string& name, const std::string& help,
                        std::function<uint64_t()> read, Labels labels = {});

  // Prometheus text exposition of every series, families sorted by name.
  std::string exposition() const;

 private:
  struct Series {
    Labels labels;
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::unique_ptr<Histogram> histogram;
    std::function<double()> read;            // callback gauge
    std::function<uint64_t()> read_counter;  // callback counter
  };
  struct Family {
    MetricType type;
    std::string help;
    std::vector<double> bounds;
    std::map<std::string, Series> series;  // by rendered label set
  };
  Series& series(const std::string& name, const std::string& help, MetricType type,
                 Labels labels, const std::vector<double>* bounds);

  mutable std::mutex mutex_;
  std::map<std::string, Family> families_;
};

// The process-wide registry that /metrics exposes.
Registry& global();

// Prometheus' label value escaping (backslash, double quote, newline).
std::string escape_label_value(std::string_view value);
// Numbers as Prometheus prints them: shortest round-trip, +Inf, -Inf, NaN.
std::string format_value(double v);

// ---- Tally's named metrics (all in global()) ------------------------------

enum class QueryOutcome { ok, error, cancelled, timeout };
enum class Engine { cpu, gpu };

constexpr std::array<double, 16> query_latency_buckets_seconds = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

Counter& connections_total();    // tally_connections_total: sessions accepted
Counter& connections_refused_total();  // over max_connections, auth failures
Gauge& connections_active();     // tally_connections_active
Counter& queries_total(QueryOutcome outcome);  // tally_queries_total{outcome}
Histogram& query_duration_seconds(Engine engine);  // tally_query_duration_seconds{engine}
Gauge& gpu_memory_total_bytes();  // set by tallyd from the device it uses

// Read at scrape time from common/engine_counters.hpp (the query path counts
// there, one relaxed add per event; server/ only reads):
//   tally_rows_scanned_total, tally_bytes_scanned_total     scans (executor/)
//   tally_aggregations_total{engine}                        engine runs
//   tally_column_cache_hits_total, _misses_total, _bytes,
//   tally_column_cache_hit_ratio                            device column cache (gpu/)
//   tally_gpu_memory_used_bytes, tally_gpu_bytes_transferred_total
//   tally_tuner_measurements_total, tally_tuner_explorations_total,
//   tally_tuning_cache_writes_total                         the tuner (gpu/tuner)
// tally_tuning_cache_entries reads the persisted cache through the source
// tallyd sets (0 until then).
void set_tuning_cache_entries_source(std::function<double()> read);

// Creates every named series above (at zero), so /metrics lists them all from
// the start, as Prometheus expects, not only once each is first used.
void register_named_metrics();

}  // namespace tally::metrics
