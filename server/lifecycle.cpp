#include "server/lifecycle.hpp"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/log.hpp"
#include "common/thread_name.hpp"
#include "config/config_loader.hpp"
#include "server/metrics_query_log.hpp"

namespace tally::server {
namespace {

sigset_t lifecycle_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGQUIT);
  return set;
}

}  // namespace

std::string_view signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    default: return "signal";
  }
}

namespace {

// How often a waiting loop re-checks its stop condition.
constexpr auto poll_interval = std::chrono::milliseconds(20);

}  // namespace

void block_lifecycle_signals() {
  sigset_t set = lifecycle_signals();
  if (int rc = pthread_sigmask(SIG_BLOCK, &set, nullptr); rc != 0)
    throw std::runtime_error(std::string("pthread_sigmask: ") + std::strerror(rc));
}

SignalWatcher::SignalWatcher(SignalCallbacks callbacks) : callbacks_(std::move(callbacks)) {}
SignalWatcher::~SignalWatcher() { stop(); }

void SignalWatcher::start() {
  if (thread_.joinable()) return;
  block_lifecycle_signals();
  stop_ = false;
  thread_ = std::thread([this] {
    name_this_thread("tally-lifecycle");
    loop();
  });
}

void SignalWatcher::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void SignalWatcher::loop() {
  sigset_t set = lifecycle_signals();
  // sigtimedwait rather than sigwait so stop() never needs to send a signal.
  const timespec timeout{0, 100'000'000};
  while (!stop_) {
    int sig = sigtimedwait(&set, nullptr, &timeout);
    if (sig < 0) continue;  // EAGAIN (timeout) or EINTR
    if (sig == SIGHUP) {
      log::info("reload_requested", {{"signal", "SIGHUP"}});
      if (callbacks_.on_reload) callbacks_.on_reload();
      continue;
    }
    // SIGQUIT is PostgreSQL's immediate shutdown: no grace period.
    bool hurry = shutdown_signals_++ > 0 || sig == SIGQUIT;
    log::info("shutdown_requested", {{"signal", signal_name(sig)}, {"hurry", hurry}});
    if (callbacks_.on_shutdown) callbacks_.on_shutdown(sig, hurry);
  }
}

ShutdownReport run_shutdown(const ShutdownSteps& steps, std::chrono::milliseconds grace,
                            const std::atomic<bool>* hurry) {
  using clock = std::chrono::steady_clock;
  ShutdownReport report;
  auto start = clock::now();
  if (steps.stop_accepting) steps.stop_accepting();
  report.queries_at_start = steps.running_queries ? steps.running_queries() : 0;
  log::info("shutdown_started", {{"running_queries", report.queries_at_start},
                                 {"grace_ms", static_cast<int64_t>(grace.count())}});
  size_t running = report.queries_at_start;
  auto deadline = start + grace;
  while (running > 0 && clock::now() < deadline && !(hurry && hurry->load())) {
    std::this_thread::sleep_for(std::min<clock::duration>(poll_interval, deadline - clock::now()));
    running = steps.running_queries ? steps.running_queries() : 0;
  }
  report.waited = std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - start);
  if (running > 0) {
    report.queries_cancelled = running;
    log::warning("shutdown_cancelling_queries", {{"running_queries", running}});
    if (steps.cancel_queries) steps.cancel_queries();
  }
  if (steps.close_sessions) steps.close_sessions();
  if (steps.flush) steps.flush();
  log::info("shutdown_finished", {{"queries_at_start", report.queries_at_start},
                                  {"queries_cancelled", report.queries_cancelled},
                                  {"waited_ms", static_cast<int64_t>(report.waited.count())}});
  return report;
}

LiveConfig::LiveConfig(config::Config initial)
    : current_(std::make_shared<const config::Config>(std::move(initial))) {}

std::shared_ptr<const config::Config> LiveConfig::get() const {
  std::lock_guard lock(mutex_);
  return current_;
}

void LiveConfig::set(config::Config next) {
  auto fresh = std::make_shared<const config::Config>(std::move(next));
  std::lock_guard lock(mutex_);
  current_ = std::move(fresh);
}

void apply_logging(const config::Config& config) {
  // config::LogLevel and log::Level name the same four levels.
  switch (config.log_level) {
    case config::LogLevel::debug: log::set_level(log::Level::debug); break;
    case config::LogLevel::info: log::set_level(log::Level::info); break;
    case config::LogLevel::warning: log::set_level(log::Level::warning); break;
    case config::LogLevel::error: log::set_level(log::Level::error); break;
  }
  log::set_format(config.log_format == config::LogFormat::json ? log::Format::json
                                                               : log::Format::text);
  set_log_statement(config.log_statement);
}

bool reloadable_setting(const std::string& key) {
  static const char* const keys[] = {"log_level",         "log_format",   "log_statement",
                                     "max_connections",
                                     "max_message_bytes", "statement_timeout_ms",
                                     "shutdown_grace_ms", "users",        "http_token"};
  return key.starts_with("tuning.") || std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

ReloadOutcome reload_config(int argc, const char* const* argv,
                            const std::map<std::string, std::string>& env, LiveConfig& live) {
  ReloadOutcome outcome;
  config::LoadResult fresh;
  try {
    fresh = config::load_config(argc, argv, env);
  } catch (const config::ConfigError& e) {
    outcome.error = e.what();
    log::error("reload_failed", {{"error", outcome.error}});
    return outcome;
  }
  std::shared_ptr<const config::Config> old = live.get();
  config::Config next = *old;
  const config::Config& f = fresh.config;
  next.log_level = f.log_level;
  next.log_format = f.log_format;
  next.log_statement = f.log_statement;
  next.max_connections = f.max_connections;
  next.max_message_bytes = f.max_message_bytes;
  next.statement_timeout_ms = f.statement_timeout_ms;
  next.shutdown_grace_ms = f.shutdown_grace_ms;
  next.users = f.users;
  next.http_token = f.http_token;
  next.tuning = f.tuning;
  for (const std::string& key : config::changed_settings(*old, f)) {
    if (reloadable_setting(key)) outcome.applied.push_back(key);
    else outcome.need_restart.push_back(key);
  }
  apply_logging(next);
  live.set(std::move(next));
  outcome.ok = true;
  for (const auto& key : outcome.applied) log::info("setting_reloaded", {{"setting", key}});
  for (const auto& key : outcome.need_restart)
    log::warning("setting_needs_restart", {{"setting", key}, {"source", fresh.source_of(key)}});
  return outcome;
}

}  // namespace tally::server
