#pragma once
// The one typed configuration of tallyd. Built from a TOML file (--config),
// overridden by command-line flags, overridden by TALLY_* environment variables,
// and validated once at start-up (config/config_loader.hpp).
#include <cstdint>
#include <string>
#include <vector>

namespace tally::config {

enum class AuthMethod { trust, password, md5, scram_sha_256 };
enum class LogFormat { text, json };
enum class LogLevel { debug, info, warning, error };
// Which statements get a "query" line at info level (PostgreSQL's log_statement,
// with one Tally value): none, statements that read table rows (the GROUP BY
// queries the server exists for: their line names engine, variant and the bytes
// scanned), or all. At log_level debug every statement is logged, with its text.
enum class LogStatement { none, scans, all };

struct UserConfig {
  std::string name;
  AuthMethod method = AuthMethod::trust;
  // "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>" (PostgreSQL's
  // format). Plain passwords given in configuration are hashed into this on load.
  std::string scram_verifier;
  // "md5" + md5(password + user), needed only by md5 authentication.
  std::string md5_hash;
};

struct TuningConfig {
  bool enabled = true;            // online refinement during queries
  double similarity_s = 0.06;     // DaMoN'19 plateau similarity
  double pruning_p = 1.07;        // DaMoN'19 pruning factor
  double v_max = 0.019;           // DaMoN'19 max relative variation of a measurement
  int b_max = 10;                 // DaMoN'19 max chunks per measurement
  double explore_rate = 0.05;     // vw-greedy exploration probability across queries
  // On a warm tuning cache, the expected share of a query's chunks that may
  // run something other than the cached best (continuing the search or a
  // vw-greedy exploration). 1/32: a neighbour 30 % slower costs <= 1 %.
  double warm_search_share = 1.0 / 32;
};

struct Config {
  // PostgreSQL listener.
  std::string listen_address = "127.0.0.1";
  uint16_t port = 5432;
  // Authenticated sessions; connections still authenticating take no slot.
  int max_connections = 100;
  // Of max_connections, the slots only superusers may take (PostgreSQL's
  // superuser_reserved_connections), so an administrator can always get in.
  int superuser_reserved_connections = 3;
  // Users that may take the reserved slots. Tally has no roles; the default
  // users play PostgreSQL's bootstrap superuser.
  std::vector<std::string> superusers = {"tally", "postgres"};
  // A connection that has not finished startup and authentication within
  // this many seconds is closed (PostgreSQL's authentication_timeout).
  int authentication_timeout_s = 60;
  uint32_t max_message_bytes = 64u << 20;  // larger messages are 08P01
  // HTTP admin endpoint; port 0 disables it.
  std::string http_address = "127.0.0.1";
  uint16_t http_port = 0;
  std::string http_token;  // empty = no token required

  std::string data_dir = "tally-data";
  // "postgres" too: the database tools connect to when given none (psql -U
  // postgres, pgAdmin, DBeaver). Every name reaches the same tables.
  std::vector<std::string> databases = {"tally", "postgres"};
  // Default: users "tally" and "postgres" (the role tools default to) with
  // trust, which (like PostgreSQL's default local rules) is honoured for
  // loopback connections only.
  std::vector<UserConfig> users = {UserConfig{"tally", AuthMethod::trust, "", ""},
                                   UserConfig{"postgres", AuthMethod::trust, "", ""}};

  // TLS: enabled when both files are set.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_ca_file;

  // Engines.
  int gpu_device = -1;               // -1 = first GPU if any, -2 = never use a GPU
  // GPUs whose chunks one engine spreads a table over: "" = gpu_device's one
  // device, "all" = every device, else a comma list of ordinals ("0,1").
  std::string gpu_devices;
  uint64_t gpu_memory_budget = 0;    // bytes; 0 = 80% of free device memory
  uint64_t column_cache_bytes = 0;   // bytes; 0 = half the GPU budget
  int cpu_threads = 0;               // 0 = hardware concurrency
  uint64_t cpu_memory_budget = 0;    // bytes one statement may hold; 0 = server_memory_budget
  // Bytes all statements together may hold; 0 = three quarters of the host's
  // memory (common/host_memory.hpp) less the chunk cache.
  uint64_t server_memory_budget = 0;
  uint32_t chunk_rows = 1u << 20;    // rows per stored chunk
  uint64_t chunk_cache_bytes = 0;    // decoded chunks kept in host memory; 0 = a third of the host's memory
  // Fault in, at start, the free heap that large queries reuse
  // (common/heap_retention.hpp), so that the first ones after a start run
  // as fast as their repeats.
  bool pretouch_heap = false;
  TuningConfig tuning;

  // Sessions and lifecycle.
  uint64_t statement_timeout_ms = 0;  // 0 = none
  uint64_t shutdown_grace_ms = 10000;

  LogLevel log_level = LogLevel::info;
  LogFormat log_format = LogFormat::text;
  // "scans": SELECT 1, SET, BEGIN and catalog reads write no line per statement
  // (a line per statement costs a short statement's round trip about a third
  // of its time with several clients); connection, disconnection and error
  // lines stay.
  LogStatement log_statement = LogStatement::scans;
};

}  // namespace tally::config
