// tallyd: the Tally server. Loads the configuration (TOML file, flags,
// TALLY_* variables), opens the database (catalog, storage, engines), serves
// PostgreSQL clients until SIGTERM/SIGINT, then stops gracefully: idle
// sessions end with FATAL 57P01 at once, running statements get
// shutdown_grace_ms to finish before they are cancelled.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>

#include "config/config_loader.hpp"
#include "executor/database.hpp"
#include "server/server.hpp"

extern char** environ;

namespace {

// Signals are taken synchronously by the main thread (sigwait), so no handler
// runs inside a session thread. Blocked before any thread starts, inherited by all.
sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGQUIT);
  return set;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tally;
  config::LoadResult loaded;
  try {
    loaded = config::load_config(argc, argv, config::environment_map(environ));
  } catch (const config::ConfigError& e) {
    std::cerr << "tallyd: " << e.what() << "\n";
    return 2;
  }
  if (loaded.action == config::LoadAction::exit_ok) {
    std::cout << loaded.output;
    return 0;
  }
  for (const auto& warning : loaded.warnings) std::cerr << "tallyd: warning: " << warning << "\n";
  const config::Config& config = loaded.config;

  // A client that vanishes must not kill the process through SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  sigset_t signals = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::unique_ptr<executor::Database> database;
  std::unique_ptr<server::Server> server;
  try {
    database = executor::Database::open(config);
    server = std::make_unique<server::Server>(config, database->handler_factory());
    server->start();
  } catch (const std::exception& e) {
    std::cerr << "tallyd: could not start: " << e.what() << "\n";
    return 1;
  }
  std::cerr << "tallyd: listening on " << config.listen_address << ":" << server->port()
            << ", data directory " << config.data_dir << "\n";

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  // SIGQUIT is PostgreSQL's immediate shutdown: no grace for running statements.
  auto grace = signal_number == SIGQUIT ? std::chrono::milliseconds(0)
                                        : std::chrono::milliseconds(config.shutdown_grace_ms);
  std::cerr << "tallyd: received signal " << signal_number << ", shutting down\n";
  server->stop(grace);
  server.reset();
  database.reset();
  std::cerr << "tallyd: stopped\n";
  return 0;
}
