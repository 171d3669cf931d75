// tallyd: the Tally server. Loads the configuration (TOML file, flags,
// TALLY_* variables), opens the database (catalog, storage, engines), serves
// PostgreSQL clients and the HTTP admin endpoint until SIGTERM/SIGINT, then
// shuts down gracefully (server/lifecycle.hpp): no new connections, idle
// sessions end with FATAL 57P01, running statements get shutdown_grace_ms to
// finish before they are cancelled (a second signal cancels them at once).
// SIGHUP re-reads the configuration; users and limits apply to new connections.
#include <atomic>
#include <cmath>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <iostream>
#include <mutex>
#include <thread>

#include <unistd.h>

#include "common/heap_retention.hpp"
#include "common/log.hpp"
#include "config/config_loader.hpp"
#include "executor/database.hpp"
#include "server/admin_server.hpp"
#include "server/buffered_log_sink.hpp"
#include "server/lifecycle.hpp"
#include "server/metrics.hpp"
#include "server/metrics_query_log.hpp"
#include "server/server.hpp"

#include "catalog/catalog.hpp"
#include "gpu/rules/device_info.hpp"
#include "server/admin_tuning_source.hpp"
#include "storage/table_store.hpp"

extern char** environ;

namespace {

// Set by the signal thread, awaited by main.
struct ShutdownRequest {
  std::mutex mutex;
  std::condition_variable requested;
  bool pending = false;
  std::atomic<bool> hurry{false};
};

// The GPU this tallyd would use (Config::gpu_device: -1 the first, -2 none),
// as the tuning page shows it; null without one. Also sets the metric of its
// memory size.
nlohmann::json device_json(const tally::config::Config& config) {
  using namespace tally;
  if (config.gpu_device == -2 || gpu::device_count() == 0) return nullptr;
  try {
    const gpu::DeviceInfo d = gpu::query_device(config.gpu_device < 0 ? 0 : config.gpu_device);
    metrics::gpu_memory_total_bytes().set(double(d.total_memory));
    return {{"name", d.name},
            {"fingerprint", d.fingerprint()},  // the tuning cache's device key
            {"compute_capability", std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
            {"sm_count", d.sm_count},
            {"memory_bytes", d.total_memory},
            {"l2_bytes", d.l2_bytes},
            {"shared_memory_per_sm", d.shared_memory_per_sm},
            {"driver_version", d.driver_version}};
  } catch (const std::exception& e) {
    log::warning("gpu_query_failed", {{"device", config.gpu_device}, {"error", e.what()}});
    return nullptr;
  }
}

// /tuning and tally_tuning_cache_entries over the catalog's tuning cache.
std::unique_ptr<tally::server::AdminTuningSource> open_tuning_source(tally::executor::Database& database) {
  if (database.store() == nullptr) return nullptr;
  auto source = std::make_unique<tally::server::AdminTuningSource>(database.store()->catalog().database_path(),
                                                                   device_json(database.config()));
  tally::metrics::set_tuning_cache_entries_source([s = source.get()] {
    try {
      return double(s->entry_count());
    } catch (const std::exception&) {
      return std::nan("");  // a scrape reports "unknown" rather than failing
    }
  });
  return source;
}

// Faults in the heap that large queries reuse before the first client
// connects (Config::pretouch_heap), under the bound the CPU engine keeps
// (release_retained_heap_over): at the bound itself, what the first
// statements free beside it would send all of it back to the kernel.
void pretouch_heap_at_start(const tally::config::Config& config) {
  using namespace tally;
  const size_t bytes = retained_heap_bytes() / 4 * 3;
  const int threads = config.cpu_threads > 0 ? config.cpu_threads
                                             : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto start = std::chrono::steady_clock::now();
  if (!pretouch_heap(bytes, threads)) {
    log::warning("heap_pretouch_failed", {{"bytes", bytes}, {"message", "the heap could not grow by that much"}});
    return;
  }
  log::info("heap_pretouched", {{"bytes", bytes}, {"threads", threads},
                                {"ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count()}});
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tally;
  // Before any thread starts, so that only the signal thread takes them.
  server::block_lifecycle_signals();
  const auto env = config::environment_map(environ);
  config::LoadResult loaded;
  try {
    loaded = config::load_config(argc, argv, env);
  } catch (const config::ConfigError& e) {
    std::cerr << "tallyd: " << e.what() << "\n";
    return 2;
  }
  if (loaded.action == config::LoadAction::exit_ok) {
    std::cout << loaded.output;
    return 0;
  }
  server::apply_logging(loaded.config);
  // Sessions append their lines; a background thread writes them to stderr.
  server::BufferedLogSink log_sink(STDERR_FILENO);
  log_sink.install();
  for (const auto& warning : loaded.warnings) log::warning("config_warning", {{"message", warning}});
  server::LiveConfig live(loaded.config);
  ShutdownRequest shutdown;
  std::atomic<bool> shutdown_started{false};
  const config::Config& config = loaded.config;
  if (config.pretouch_heap) pretouch_heap_at_start(config);

  std::unique_ptr<executor::Database> database;
  std::unique_ptr<server::QueryLogFactory> logged_sessions;
  std::unique_ptr<server::AdminTuningSource> tuning;
  std::unique_ptr<server::Server> listener;
  std::unique_ptr<server::AdminServer> admin;
  try {
    database = executor::Database::open(config);
    // Connection, query and error lines and the latency histogram.
    logged_sessions = std::make_unique<server::QueryLogFactory>(database->handler_factory());
    listener = std::make_unique<server::Server>([&live] { return live.get(); }, *logged_sessions);
    listener->start();
    if (config.http_port != 0) {
      server::AdminCallbacks callbacks;
      tuning = open_tuning_source(*database);
      if (tuning) callbacks.tuning_json = [t = tuning.get()] { return t->json(); };
      // The catalog is open and the engines initialized once Database::open
      // returned; /ready turns 503 while shutting down.
      callbacks.ready = [&shutdown_started] {
        if (shutdown_started.load()) return server::ReadyState{false, "shutting down"};
        return server::ReadyState{true, ""};
      };
      admin = std::make_unique<server::AdminServer>(config, std::move(callbacks));
      admin->start();
    }
  } catch (const std::exception& e) {
    log::error("start_failed", {{"error", e.what()}});
    log_sink.stop();  // the log line first, then the plain message
    std::cerr << "tallyd: could not start: " << e.what() << "\n";
    return 1;
  }
  log::info("listening", {{"address", config.listen_address},
                          {"port", static_cast<int64_t>(listener->port())},
                          {"data_dir", config.data_dir},
                          {"tls", !config.tls_cert_file.empty()},
                          {"http_port", static_cast<int64_t>(config.http_port)}});

  server::SignalWatcher signals(
      {.on_shutdown =
           [&](int signal, bool hurry) {
             log::info("shutdown_requested", {{"signal", signal}, {"hurry", hurry}});
             std::lock_guard lock(shutdown.mutex);
             if (hurry) shutdown.hurry = true;
             shutdown.pending = true;
             shutdown.requested.notify_all();
           },
       .on_reload =
           [&] {
             auto outcome = server::reload_config(argc, argv, env, live);
             if (outcome.ok && admin) admin->router().set_token(live.get()->http_token);
           }});
  signals.start();
  {
    std::unique_lock lock(shutdown.mutex);
    shutdown.requested.wait(lock, [&] { return shutdown.pending; });
  }

  shutdown_started = true;
  auto grace = std::chrono::milliseconds(live.get()->shutdown_grace_ms);
  server::run_shutdown({.stop_accepting = [&] { listener->stop_accepting(); },
                        .running_queries = [&] { return listener->open_connections(); },
                        .cancel_queries = [&] { listener->cancel_statements(); },
                        .close_sessions = [&] { listener->close_sessions(); },
                        .flush = nullptr},
                       grace, &shutdown.hurry);
  signals.stop();
  if (admin) admin->stop();
  listener.reset();
  logged_sessions.reset();
  metrics::set_tuning_cache_entries_source([] { return 0.0; });  // the registry outlives the source
  tuning.reset();
  database.reset();  // closes the catalog cleanly
  log::info("stopped");
  log_sink.stop();
  return 0;
}
