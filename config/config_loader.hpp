#pragma once
// Builds the one Config of tallyd from, in increasing precedence:
//   1. built-in defaults (config/config.hpp),
//   2. a TOML file (--config FILE or TALLY_CONFIG),
//   3. command-line flags (--port 5433, --port=5433),
//   4. TALLY_* environment variables (TALLY_PORT=5433), for containers.
// Everything is validated once, after all sources are applied; every problem is
// reported together in one ConfigError (tallyd exits 2). Plain passwords are
// replaced by PostgreSQL SCRAM-SHA-256 verifiers (and md5 hashes for md5 users)
// while loading, so no plain password survives in the Config.
//
// Typical main():
//   auto result = config::load_config(argc, argv, config::environment_map(environ));
//   if (result.action == config::LoadAction::exit_ok) { std::cout << result.output; return 0; }
#include <map>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/config_error.hpp"

namespace tally::config {

enum class LoadAction {
  run,      // start the server with `config`
  exit_ok,  // print `output` (--help, --version, --print-config) and exit 0
};

struct LoadResult {
  LoadAction action = LoadAction::run;
  std::string output;
  Config config;
  // Setting key ("port", "tuning.b_max", "users") -> where its value came from:
  // "default", "FILE:LINE", "--flag" or "TALLY_VAR". Lets later checks (a port
  // already in use) name the source the way the loader does.
  std::map<std::string, std::string> sources;
  std::string config_file;            // empty when none was given
  std::vector<std::string> warnings;  // e.g. unknown TALLY_* variables, ignored
  std::string source_of(const std::string& key) const;
};

// Throws ConfigError listing every problem. Reads the file and creates the data
// directory when missing (an uncreatable one is a problem).
LoadResult load_config(int argc, const char* const* argv,
                       const std::map<std::string, std::string>& env);

// Binds each listener's address:port (PostgreSQL, and HTTP when enabled) and
// releases it at once, so a port already in use (or an address this host does
// not have) stops start-up with a ConfigError naming the setting and its
// source, before anything else starts. Racy by nature: the listener's own
// bind error stays the final word.
void check_ports_available(const LoadResult& loaded);

// The process environment as a map (pass `environ`).
std::map<std::string, std::string> environment_map(char** envp);

// `tallyd --help`: every flag with its default and its TOML key and variable,
// generated from the same table that parses them.
std::string help_text();
// The effective configuration as TOML, each value commented with its source.
// Users appear with their method and hashes, never a plain password.
std::string render_config(const LoadResult& result);
// Keys of the settings whose values differ between two configurations. Users
// count as changed when their names or methods differ (fresh salts make every
// reload's verifiers differ even for the same passwords).
std::vector<std::string> changed_settings(const Config& before, const Config& after);
// Parses a log level name ("debug", "info", "warning", "error").
bool parse_log_level(std::string_view text, LogLevel& out);
std::string_view log_level_name(LogLevel level);
std::string_view auth_method_name(AuthMethod method);

}  // namespace tally::config
