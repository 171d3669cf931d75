#include "server/metrics.hpp"

#include "common/engine_counters.hpp"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace tally::metrics {
namespace {

void atomic_add(std::atomic<double>& target, double d) {
  double old = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(old, old + d, std::memory_order_relaxed)) {
  }
}

std::string render_labels(const Labels& labels, const std::string& extra_key = "",
                          const std::string& extra_value = "") {
  if (labels.empty() && extra_key.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (auto& [k, v] : labels) {
    out += (first ? "" : ",") + k + "=\"" + escape_label_value(v) + "\"";
    first = false;
  }
  if (!extra_key.empty()) out += (first ? "" : ",") + extra_key + "=\"" + extra_value + "\"";
  return out + "}";
}

bool valid_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':')) return false;
  return true;
}

std::string_view type_name(MetricType type) {
  switch (type) {
    case MetricType::counter: return "counter";
    case MetricType::gauge: return "gauge";
    case MetricType::histogram: return "histogram";
  }
  return "untyped";
}

std::string_view outcome_name(QueryOutcome o) {
  switch (o) {
    case QueryOutcome::ok: return "ok";
    case QueryOutcome::error: return "error";
    case QueryOutcome::cancelled: return "cancelled";
    case QueryOutcome::timeout: return "timeout";
  }
  return "error";
}

std::string_view engine_name(Engine e) { return e == Engine::gpu ? "gpu" : "cpu"; }

constexpr const char* tuning_cache_entries_name = "tally_tuning_cache_entries";
constexpr const char* tuning_cache_entries_help = "Entries in the persisted tuning cache (every device).";

uint64_t load(const std::atomic<uint64_t>& counter) { return counter.load(std::memory_order_relaxed); }

// The series over common/engine_counters.hpp, created with the registry so
// /metrics lists them (at zero) before any query runs. The callbacks only
// load atomics: cheap, and they never touch the registry.
void register_engine_counters(Registry& r) {
  EngineCounters& c = engine_counters();
  r.counter_callback("tally_rows_scanned_total", "Table rows read by queries (after chunk pruning).",
                     [&c] { return load(c.rows_scanned); });
  r.counter_callback("tally_bytes_scanned_total", "Column bytes (values and validity) read by queries.",
                     [&c] { return load(c.bytes_scanned); });
  r.counter_callback("tally_aggregations_total", "Aggregations run, by the engine that ran them.",
                     [&c] { return load(c.cpu_aggregations); }, {{"engine", "cpu"}});
  r.counter_callback("tally_aggregations_total", "Aggregations run, by the engine that ran them.",
                     [&c] { return load(c.gpu_aggregations); }, {{"engine", "gpu"}});
  r.counter_callback("tally_column_cache_hits_total", "Chunk columns found in the device column cache.",
                     [&c] { return load(c.gpu_cache_hits); });
  r.counter_callback("tally_column_cache_misses_total",
                     "Chunk columns copied to the device because they were not cached.",
                     [&c] { return load(c.gpu_cache_misses); });
  r.gauge_callback("tally_column_cache_hit_ratio",
                   "Column-cache hits over lookups since start (0 before any lookup).", [&c] {
                     double h = double(load(c.gpu_cache_hits)), m = double(load(c.gpu_cache_misses));
                     return h + m == 0 ? 0.0 : h / (h + m);
                   });
  r.gauge_callback("tally_column_cache_bytes", "Bytes resident in the device column cache now.",
                   [&c] { return double(load(c.gpu_cache_bytes)); });
  r.gauge_callback("tally_gpu_memory_used_bytes", "Device memory held by Tally now (pool and column cache).",
                   [&c] { return double(load(c.gpu_memory_used_bytes)); });
  r.counter_callback("tally_gpu_bytes_transferred_total", "Bytes copied from host to device.",
                     [&c] { return load(c.gpu_bytes_transferred); });
  r.counter_callback("tally_tuner_measurements_total", "Launch configurations measured by the tuner.",
                     [&c] { return load(c.tuner_measurements); });
  r.counter_callback("tally_tuner_explorations_total",
                     "Chunks or queries run with a configuration or variant other than the current best.",
                     [&c] { return load(c.tuner_explorations); });
  r.counter_callback("tally_tuning_cache_writes_total", "Entries written to the tuning cache.",
                     [&c] { return load(c.tuning_cache_writes); });
  r.gauge_callback(tuning_cache_entries_name, tuning_cache_entries_help, [] { return 0.0; });
}

}  // namespace

void Gauge::add(double d) { atomic_add(value_, d); }

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds_(std::move(upper_bounds)), counts_(new std::atomic<uint64_t>[bounds_.size() + 1]) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end()) ||
      std::adjacent_find(bounds_.begin(), bounds_.end()) != bounds_.end())
    throw std::logic_error("histogram bounds must be strictly increasing");
  for (size_t i = 0; i <= bounds_.size(); ++i) counts_[i].store(0, std::memory_order_relaxed);
}

void Histogram::observe(double v) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  atomic_add(sum_, v);
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  // Shortest text that reads back as the same double ("10", "0.1", "1e-09").
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ec == std::errc() ? end : buf);
}

Registry::Series& Registry::series(const std::string& name, const std::string& help,
                                   MetricType type, Labels labels,
                                   const std::vector<double>* bounds) {
  if (!valid_name(name)) throw std::logic_error("invalid metric name " + name);
  std::sort(labels.begin(), labels.end());
  std::string key = render_labels(labels);
  auto [fit, created] = families_.try_emplace(name);
  Family& family = fit->second;
  if (created) {
    family.type = type;
    family.help = help;
    if (bounds) family.bounds = *bounds;
  } else if (family.type != type || (bounds && family.bounds != *bounds)) {
    throw std::logic_error("metric " + name + " registered twice with different shapes");
  }
  auto [sit, new_series] = family.series.try_emplace(key);
  if (new_series) sit->second.labels = std::move(labels);
  return sit->second;
}

Counter& Registry::counter(const std::string& name, const std::string& help, Labels labels) {
  std::lock_guard lock(mutex_);
  Series& s = series(name, help, MetricType::counter, std::move(labels), nullptr);
  if (s.read_counter) throw std::logic_error("counter " + name + " is a callback counter");
  if (!s.counter) s.counter = std::make_unique<Counter>();
  return *s.counter;
}

void Registry::counter_callback(const std::string& name, const std::string& help,
                                std::function<uint64_t()> read, Labels labels) {
  std::lock_guard lock(mutex_);
  Series& s = series(name, help, MetricType::counter, std::move(labels), nullptr);
  if (s.counter) throw std::logic_error("counter " + name + " already has a stored value");
  s.read_counter = std::move(read);
}

Gauge& Registry::gauge(const std::string& name, const std::string& help, Labels labels) {
  std::lock_guard lock(mutex_);
  Series& s = series(name, help, MetricType::gauge, std::move(labels), nullptr);
  if (s.read) throw std::logic_error("gauge " + name + " is a callback gauge");
  if (!s.gauge) s.gauge = std::make_unique<Gauge>();
  return *s.gauge;
}

Histogram& Registry::histogram(const std::string& name, const std::string& help,
                               const std::vector<double>& upper_bounds, Labels labels) {
  std::lock_guard lock(mutex_);
  Series& s = series(name, help, MetricType::histogram, std::move(labels), &upper_bounds);
  if (!s.histogram) s.histogram = std::make_unique<Histogram>(upper_bounds);
  return *s.histogram;
}

void Registry::gauge_callback(const std::string& name, const std::string& help,
                              std::function<double()> read, Labels labels) {
  std::lock_guard lock(mutex_);
  Series& s = series(name, help, MetricType::gauge, std::move(labels), nullptr);
  if (s.gauge) throw std::logic_error("gauge " + name + " already has a stored value");
  s.read = std::move(read);
}

std::string Registry::exposition() const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [name, family] : families_) {
    out += "# HELP " + name + " " + family.help + "\n";
    out += "# TYPE " + name + " " + std::string(type_name(family.type)) + "\n";
    for (const auto& [key, s] : family.series) {
      switch (family.type) {
        case MetricType::counter:
          out += name + key + " " + std::to_string(s.read_counter ? s.read_counter() : s.counter->value()) + "\n";
          break;
        case MetricType::gauge:
          out += name + key + " " + format_value(s.read ? s.read() : s.gauge->value()) + "\n";
          break;
        case MetricType::histogram: {
          const Histogram& h = *s.histogram;
          uint64_t cumulative = 0;
          for (size_t i = 0; i <= h.upper_bounds().size(); ++i) {
            cumulative += h.bucket_count(i);
            std::string le = i < h.upper_bounds().size() ? format_value(h.upper_bounds()[i]) : "+Inf";
            out += name + "_bucket" + render_labels(s.labels, "le", le) + " " +
                   std::to_string(cumulative) + "\n";
          }
          out += name + "_sum" + key + " " + format_value(h.sum()) + "\n";
          // The count is the +Inf bucket, so the two always agree in one scrape.
          out += name + "_count" + key + " " + std::to_string(cumulative) + "\n";
          break;
        }
      }
    }
  }
  return out;
}

Registry& global() {
  static Registry* registry = [] {
    auto* r = new Registry();  // never destroyed: threads may scrape during exit
    auto start = std::chrono::duration<double>(
                     std::chrono::system_clock::now().time_since_epoch()).count();
    r->gauge("tally_process_start_time_seconds", "Start time of the process since the Unix epoch.")
        .set(start);
    register_engine_counters(*r);
    return r;
  }();
  return *registry;
}

Counter& connections_total() {
  static Counter& c = global().counter("tally_connections_total", "Client sessions accepted.");
  return c;
}
Counter& connections_refused_total() {
  static Counter& c = global().counter(
      "tally_connections_refused_total",
      "Client connections refused (connection limit, failed authentication, shutdown).");
  return c;
}
Gauge& connections_active() {
  static Gauge& g = global().gauge("tally_connections_active", "Client sessions now open.");
  return g;
}
Counter& queries_total(QueryOutcome outcome) {
  static std::array<Counter*, 4> counters = [] {
    std::array<Counter*, 4> a{};
    for (auto o : {QueryOutcome::ok, QueryOutcome::error, QueryOutcome::cancelled, QueryOutcome::timeout})
      a[size_t(o)] = &global().counter("tally_queries_total", "Statements finished, by outcome.",
                                       {{"outcome", std::string(outcome_name(o))}});
    return a;
  }();
  return *counters[size_t(outcome)];
}
Histogram& query_duration_seconds(Engine engine) {
  static std::array<Histogram*, 2> histograms = [] {
    std::array<Histogram*, 2> a{};
    std::vector<double> bounds(query_latency_buckets_seconds.begin(), query_latency_buckets_seconds.end());
    for (auto e : {Engine::cpu, Engine::gpu})
      a[size_t(e)] = &global().histogram("tally_query_duration_seconds",
                                         "Statement latency in seconds, by engine.", bounds,
                                         {{"engine", std::string(engine_name(e))}});
    return a;
  }();
  return *histograms[size_t(engine)];
}
Gauge& gpu_memory_total_bytes() {
  static Gauge& g = global().gauge("tally_gpu_memory_total_bytes", "Device memory of the GPU in use (0 without one).");
  return g;
}

void set_tuning_cache_entries_source(std::function<double()> read) {
  global().gauge_callback(tuning_cache_entries_name, tuning_cache_entries_help, std::move(read));
}

}  // namespace tally::metrics

namespace tally::metrics {

void register_named_metrics() {
  connections_total();
  connections_refused_total();
  connections_active();
  for (auto o : {QueryOutcome::ok, QueryOutcome::error, QueryOutcome::cancelled, QueryOutcome::timeout})
    queries_total(o);
  for (auto e : {Engine::cpu, Engine::gpu}) query_duration_seconds(e);
  gpu_memory_total_bytes();
  // The engine counters' series are created with the registry (global()).
}

}  // namespace tally::metrics
