#pragma once
// The settings whose value is tallyd's configuration (port, listen_addresses,
// max_connections, data_directory, ssl, statement_timeout ...): SHOW and
// pg_settings answer what this server runs with, as PostgreSQL's do.
#include "config/config.hpp"
#include "executor/settings.hpp"

namespace tally::executor {

// Makes the configured values the session's defaults.
void apply_server_settings(Settings& settings, const config::Config& config);

}  // namespace tally::executor
