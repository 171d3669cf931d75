#pragma once
// OpsRuntime: the operational pieces of tallyd's main in a few calls -
// structured logging from the configuration, the admin endpoint (with /ready
// false until the server is up), SIGHUP reloads and the wait for a shutdown
// signal - so main only wires its own parts:
//
//   int main(int argc, char** argv) {
//     server::block_lifecycle_signals();                 // before any thread
//     auto env = config::environment_map(environ);
//     auto loaded = config::load_config(argc, argv, env); // (help, errors: exit 0/2)
//     server::OpsRuntime ops(argc, argv, env, loaded);    // logging configured
//     ops.start_admin([&] { return database->tuning_json(); });  // if http_port != 0
//     ... open the database, start the listener ...
//     ops.mark_ready(true);
//     int sig = ops.wait_for_shutdown_signal([&](const config::Config& c) { server->apply(c); });
//     ops.mark_ready(false);
//     server->stop(sig == SIGQUIT ? 0ms : std::chrono::milliseconds(ops.live().get()->shutdown_grace_ms));
//   }
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config_loader.hpp"
#include "server/admin_server.hpp"
#include "server/lifecycle.hpp"

namespace tally::server {

class OpsRuntime {
 public:
  // Keeps argv and the environment to re-read the same sources on SIGHUP.
  OpsRuntime(int argc, const char* const* argv, std::map<std::string, std::string> env,
             const config::LoadResult& loaded);
  ~OpsRuntime();

  LiveConfig& live() { return live_; }

  // Starts the admin endpoint when http_port != 0 (else does nothing). /ready
  // answers 503 until mark_ready(true), then asks `ready` if given. Throws
  // std::runtime_error naming the address, port and setting when it cannot bind.
  void start_admin(std::function<std::string()> tuning_json = nullptr,
                   std::function<ReadyState()> ready = nullptr);
  void mark_ready(bool ready) { ready_ = ready; }
  AdminServer* admin() { return admin_.get(); }

  // Blocks until SIGTERM, SIGINT or SIGQUIT and returns it. Meanwhile each
  // SIGHUP re-reads the configuration, applies logging and the admin token,
  // and hands the new configuration to `on_reload` (users, limits, timeouts).
  // Needs block_lifecycle_signals() before any thread was started.
  int wait_for_shutdown_signal(std::function<void(const config::Config&)> on_reload = nullptr);

  // Handles one SIGHUP's work; public for tests and for a caller with its own signal loop.
  ReloadOutcome reload(const std::function<void(const config::Config&)>& on_reload = nullptr);

  void stop_admin();

 private:
  std::vector<std::string> args_;
  std::map<std::string, std::string> env_;
  LiveConfig live_;
  std::atomic<bool> ready_{false};
  std::unique_ptr<AdminServer> admin_;
};

}  // namespace tally::server
