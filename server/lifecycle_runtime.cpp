#include "server/lifecycle_runtime.hpp"

#include <signal.h>

#include "common/log.hpp"

namespace tally::server {

OpsRuntime::OpsRuntime(int argc, const char* const* argv, std::map<std::string, std::string> env,
                       const config::LoadResult& loaded)
    : args_(argv, argv + argc), env_(std::move(env)), live_(loaded.config) {
  apply_logging(loaded.config);
  for (const auto& warning : loaded.warnings) log::warning("configuration_warning", {{"detail", warning}});
  log::info("configuration_loaded",
            {{"file", loaded.config_file.empty() ? "(none)" : loaded.config_file},
             {"port", loaded.config.port},
             {"http_port", loaded.config.http_port},
             {"data_dir", loaded.config.data_dir}});
}

OpsRuntime::~OpsRuntime() { stop_admin(); }

void OpsRuntime::start_admin(std::function<std::string()> tuning_json,
                             std::function<ReadyState()> ready) {
  auto config = live_.get();
  if (config->http_port == 0) return;
  AdminCallbacks callbacks;
  callbacks.tuning_json = std::move(tuning_json);
  callbacks.ready = [this, ready = std::move(ready)]() -> ReadyState {
    if (!ready_) return {false, "starting or stopping"};
    return ready ? ready() : ReadyState{true, ""};
  };
  admin_ = std::make_unique<AdminServer>(*config, std::move(callbacks));
  admin_->start();
}

void OpsRuntime::stop_admin() {
  if (admin_) admin_->stop();
}

ReloadOutcome OpsRuntime::reload(const std::function<void(const config::Config&)>& on_reload) {
  std::vector<const char*> argv;
  for (const auto& a : args_) argv.push_back(a.c_str());
  ReloadOutcome outcome = reload_config(static_cast<int>(argv.size()), argv.data(), env_, live_);
  if (!outcome.ok) return outcome;
  auto config = live_.get();
  if (admin_) admin_->router().set_token(config->http_token);
  if (on_reload) on_reload(*config);
  return outcome;
}

int OpsRuntime::wait_for_shutdown_signal(std::function<void(const config::Config&)> on_reload) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGQUIT, SIGHUP}) sigaddset(&set, sig);
  while (true) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (sig == SIGHUP) {
      log::info("reload_requested", {{"signal", "SIGHUP"}});
      reload(on_reload);
      continue;
    }
    log::info("shutdown_requested", {{"signal", signal_name(sig)}});
    return sig;
  }
}

}  // namespace tally::server
