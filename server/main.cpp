// tallyd: the Tally server. Loads the configuration (TOML file, flags,
// TALLY_* variables), opens the database (catalog, storage, engines), serves
// PostgreSQL clients and the HTTP admin endpoint until SIGTERM/SIGINT, then
// shuts down gracefully (server/lifecycle.hpp): no new connections, idle
// sessions end with FATAL 57P01, running statements get shutdown_grace_ms to
// finish before they are cancelled (a second signal cancels them at once).
// SIGHUP re-reads the configuration; users and limits apply to new connections.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <iostream>
#include <mutex>

#include "common/log.hpp"
#include "config/config_loader.hpp"
#include "executor/database.hpp"
#include "server/admin_server.hpp"
#include "server/lifecycle.hpp"
#include "server/server.hpp"

extern char** environ;

namespace {

// Set by the signal thread, awaited by main.
struct ShutdownRequest {
  std::mutex mutex;
  std::condition_variable requested;
  bool pending = false;
  std::atomic<bool> hurry{false};
};

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
  for (const auto& warning : loaded.warnings) log::warning("config_warning", {{"message", warning}});
  server::LiveConfig live(loaded.config);
  const config::Config& config = loaded.config;

  std::unique_ptr<executor::Database> database;
  std::unique_ptr<server::Server> listener;
  std::unique_ptr<server::AdminServer> admin;
  try {
    database = executor::Database::open(config);
    listener = std::make_unique<server::Server>([&live] { return live.get(); },
                                                database->handler_factory());
    listener->start();
    if (config.http_port != 0) {
      admin = std::make_unique<server::AdminServer>(config, server::AdminCallbacks{});
      admin->start();
    }
  } catch (const std::exception& e) {
    std::cerr << "tallyd: could not start: " << e.what() << "\n";
    log::error("start_failed", {{"error", e.what()}});
    return 1;
  }
  log::info("listening", {{"address", config.listen_address},
                          {"port", static_cast<int64_t>(listener->port())},
                          {"data_dir", config.data_dir},
                          {"tls", !config.tls_cert_file.empty()},
                          {"http_port", static_cast<int64_t>(config.http_port)}});

  ShutdownRequest shutdown;
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
  database.reset();  // closes the catalog cleanly
  log::info("stopped");
  return 0;
}
