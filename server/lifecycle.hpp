#pragma once
// Process lifecycle helpers tallyd's main wires together:
//  - SignalWatcher: SIGTERM/SIGINT -> a shutdown request (a second one asks to
//    hurry), SIGHUP -> a reload request. Signals are taken synchronously on
//    one thread with sigtimedwait, so the callbacks may do anything (take
//    locks, log), unlike code in an asynchronous signal handler.
//  - run_shutdown: stop accepting, let running queries finish within the grace
//    period, cancel the rest, close sessions (57P01), flush, report.
//  - LiveConfig + reload_config: SIGHUP re-reads the configuration sources and
//    applies what can change at run time (log level/format, limits, users,
//    statement timeout, admin token); other changes are logged as needing a
//    restart.
//
//   int main(int argc, char** argv) {
//     server::block_lifecycle_signals();          // before any thread starts
//     auto loaded = config::load_config(argc, argv, config::environment_map(environ));
//     server::LiveConfig live(loaded.config);
//     server::apply_logging(loaded.config);
//     ...
//     server::SignalWatcher signals({
//         .on_shutdown = [&](int sig, bool hurry) { shutdown_requested.notify(...); },
//         .on_reload = [&] { server::reload_config(argc, argv, environ_map, live); }});
//     signals.start();
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "config/config.hpp"

namespace tally::server {

// Blocks SIGTERM, SIGINT, SIGQUIT and SIGHUP in the calling thread; threads
// created afterwards inherit the mask, so only the thread that waits for them
// (SignalWatcher's, or main's in OpsRuntime) receives them. Call first in main.
void block_lifecycle_signals();
std::string_view signal_name(int signal);

struct SignalCallbacks {
  // First SIGTERM/SIGINT: hurry = false. Any later one, and SIGQUIT (as in
  // PostgreSQL, immediate shutdown): hurry = true (cancel now, no grace period).
  std::function<void(int signal, bool hurry)> on_shutdown;
  std::function<void()> on_reload;  // SIGHUP
};

class SignalWatcher {
 public:
  explicit SignalWatcher(SignalCallbacks callbacks);
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;
  // Requires block_lifecycle_signals() in this thread (it calls it again).
  void start();
  void stop();  // joins the thread within ~100 ms

 private:
  void loop();

  SignalCallbacks callbacks_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  int shutdown_signals_ = 0;
};

struct ShutdownSteps {
  std::function<void()> stop_accepting;        // close listeners
  std::function<size_t()> running_queries;     // polled during the grace period
  std::function<void()> cancel_queries;        // grace over: cancel what still runs
  std::function<void()> close_sessions;        // FATAL 57P01 admin_shutdown to each session
  std::function<void()> flush;                 // checkpoint the catalog
};

struct ShutdownReport {
  size_t queries_at_start = 0;
  size_t queries_cancelled = 0;  // still running when the grace period ended
  std::chrono::milliseconds waited{0};
};

// Runs the steps in order; `hurry` (may be null) ends the grace period early
// when it becomes true (a second SIGTERM). Null steps are skipped. Logs each phase.
ShutdownReport run_shutdown(const ShutdownSteps& steps, std::chrono::milliseconds grace,
                            const std::atomic<bool>* hurry = nullptr);

// The configuration now in force, replaced as a whole on SIGHUP; readers keep
// the snapshot they took for as long as they need it (a session: per statement).
class LiveConfig {
 public:
  explicit LiveConfig(config::Config initial);
  std::shared_ptr<const config::Config> get() const;
  void set(config::Config next);

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const config::Config> current_;
};

// Sets the global logger's level and format, and the query log's
// log_statement, from the configuration.
void apply_logging(const config::Config& config);

struct ReloadOutcome {
  bool ok = false;                       // false: sources invalid, nothing changed
  std::string error;                     // the ConfigError text when !ok
  std::vector<std::string> applied;      // settings changed now ("log_level", "users")
  std::vector<std::string> need_restart; // changed in the sources, kept until restart
};

// Settings SIGHUP applies; everything else needs a restart.
bool reloadable_setting(const std::string& key);

// Re-reads the same sources as start-up (same argv and environment), keeps the
// running values of settings that need a restart, applies logging and stores
// the result in `live`. A bad configuration changes nothing and is logged.
ReloadOutcome reload_config(int argc, const char* const* argv,
                            const std::map<std::string, std::string>& env, LiveConfig& live);

}  // namespace tally::server
