#include "executor/server_settings.hpp"

#include <filesystem>
#include <string>
#include <system_error>

#include "executor/setting_units.hpp"

namespace tally::executor {

void apply_server_settings(Settings& settings, const config::Config& config) {
  // Server-wide settings a session cannot change: initialize() makes each the
  // session's value and what RESET keeps.
  settings.initialize("port", std::to_string(config.port));
  settings.initialize("listen_addresses", config.listen_address);
  settings.initialize("max_connections", std::to_string(config.max_connections));
  settings.initialize("superuser_reserved_connections", std::to_string(config.superuser_reserved_connections));
  settings.initialize("authentication_timeout", format_integer_with_unit(config.authentication_timeout_s, "s"));
  std::error_code error;
  const auto data = std::filesystem::absolute(config.data_dir, error);
  settings.initialize("data_directory", error ? config.data_dir : data.string());
  const bool tls = !config.tls_cert_file.empty() && !config.tls_key_file.empty();
  settings.initialize("ssl", tls ? "on" : "off");
  if (tls) {
    settings.initialize("ssl_cert_file", config.tls_cert_file);
    settings.initialize("ssl_key_file", config.tls_key_file);
    settings.initialize("ssl_ca_file", config.tls_ca_file);
  }
  // Tally listens on TCP only.
  settings.initialize("unix_socket_directories", "");
  // A user setting: the configured value is the default a session may change.
  if (config.statement_timeout_ms > 0) {
    settings.set_default("statement_timeout", std::to_string(config.statement_timeout_ms));
  }
}

}  // namespace tally::executor
