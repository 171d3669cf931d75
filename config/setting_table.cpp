#include "config/setting_table.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/ascii_case.hpp"
#include "config/config_loader.hpp"
#include "config/password_hash.hpp"
#include "common/saslprep.hpp"

namespace tally::config {
namespace {


std::string trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  return std::string(text.substr(b, e - b));
}

// "tuning.b_max" -> "--tuning-b-max" and "TALLY_TUNING_B_MAX".
std::string flag_of(std::string_view key) {
  std::string f = "--";
  for (char c : key) f += (c == '.' || c == '_') ? '-' : c;
  return f;
}
std::string env_of(std::string_view key) {
  std::string e = "TALLY_";
  for (char c : key) e += (c == '.') ? '_' : char(std::toupper(static_cast<unsigned char>(c)));
  return e;
}

Setting base(std::string key, std::string value_name, std::string help, SettingKind kind) {
  Setting s;
  s.flag = flag_of(key);
  s.env = env_of(key);
  s.key = std::move(key);
  s.value_name = std::move(value_name);
  s.help = std::move(help);
  s.kind = kind;
  return s;
}

template <class Field>
Setting string_setting(std::string key, std::string value_name, std::string help, Field field,
                       std::function<void(std::string_view)> check = nullptr) {
  Setting s = base(std::move(key), std::move(value_name), std::move(help), SettingKind::string);
  s.set_text = [field, check](Config& c, std::string_view text) {
    if (check) check(text);
    field(c) = std::string(text);
  };
  s.render = [field](const Config& c) { return toml_string_literal(field(const_cast<Config&>(c))); };
  return s;
}

template <class T, class Field>
Setting integer_setting(std::string key, std::string value_name, std::string help, Field field,
                        int64_t min, int64_t max) {
  Setting s = base(std::move(key), std::move(value_name), std::move(help), SettingKind::integer);
  s.set_text = [field, min, max](Config& c, std::string_view text) {
    int64_t v = parse_integer_text(text);
    if (v < min || v > max)
      throw std::invalid_argument(std::to_string(v) + " is out of range (" + std::to_string(min) +
                                  ".." + std::to_string(max) + ")");
    field(c) = static_cast<T>(v);
  };
  s.render = [field](const Config& c) { return std::to_string(field(const_cast<Config&>(c))); };
  return s;
}

std::string render_bytes(uint64_t v) {
  // Round sizes print with PostgreSQL's memory units, like postgresql.conf.
  static constexpr std::pair<uint64_t, const char*> units[] = {
      {1ull << 40, "TB"}, {1ull << 30, "GB"}, {1ull << 20, "MB"}, {1ull << 10, "kB"}};
  if (v != 0)
    for (auto [size, name] : units)
      if (v % size == 0) return "\"" + std::to_string(v / size) + name + "\"";
  return std::to_string(v);
}

template <class T, class Field>
Setting bytes_setting(std::string key, std::string help, Field field, uint64_t min, uint64_t max) {
  Setting s = base(std::move(key), "BYTES", std::move(help), SettingKind::bytes);
  s.set_text = [field, min, max](Config& c, std::string_view text) {
    uint64_t v = parse_bytes_text(text);
    if (v < min || v > max)
      throw std::invalid_argument(std::to_string(v) + " bytes is out of range (" +
                                  std::to_string(min) + ".." + std::to_string(max) + ")");
    field(c) = static_cast<T>(v);
  };
  s.render = [field](const Config& c) { return render_bytes(field(const_cast<Config&>(c))); };
  return s;
}

template <class Field>
Setting real_setting(std::string key, std::string help, Field field, double min, double max) {
  Setting s = base(std::move(key), "X", std::move(help), SettingKind::real);
  s.set_text = [field, min, max](Config& c, std::string_view text) {
    double v = parse_real_text(text);
    if (!(v >= min && v <= max)) {
      char buf[128];
      std::snprintf(buf, sizeof buf, "%g is out of range (%g..%g)", v, min, max);
      throw std::invalid_argument(buf);
    }
    field(c) = v;
  };
  s.render = [field](const Config& c) {
    char buf[64];
    double v = field(const_cast<Config&>(c));
    std::snprintf(buf, sizeof buf, "%.17g", v);
    // Shortest text that reads back the same double.
    for (int precision = 1; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof buf, "%.*g", precision, v);
      if (std::strtod(buf, nullptr) == v) break;
    }
    std::string out = buf;
    if (out.find_first_of(".eEn") == std::string::npos) out += ".0";  // stays a TOML float
    return out;
  };
  return s;
}

template <class Field>
Setting bool_setting(std::string key, std::string help, Field field) {
  Setting s = base(std::move(key), "BOOL", std::move(help), SettingKind::boolean);
  s.set_text = [field](Config& c, std::string_view text) { field(c) = parse_bool_text(text); };
  s.render = [field](const Config& c) {
    return std::string(field(const_cast<Config&>(c)) ? "true" : "false");
  };
  return s;
}

template <class E, class Field>
Setting enum_setting(std::string key, std::string help, Field field,
                     std::vector<std::pair<std::string, E>> names) {
  std::string value_name;
  for (auto& [name, value] : names) value_name += (value_name.empty() ? "" : "|") + name;
  Setting s = base(std::move(key), value_name, std::move(help), SettingKind::enumeration);
  s.set_text = [field, names, value_name](Config& c, std::string_view text) {
    std::string l = ascii_lower(text);
    for (auto& [name, value] : names)
      if (name == l) {
        field(c) = value;
        return;
      }
    throw std::invalid_argument("\"" + std::string(text) + "\" is not one of " + value_name);
  };
  s.render = [field, names](const Config& c) {
    for (auto& [name, value] : names)
      if (value == field(const_cast<Config&>(c))) return toml_string_literal(name);
    return std::string("\"\"");
  };
  return s;
}

void check_ip_address(std::string_view text) {
  std::string t(text);
  unsigned char buf[16];
  if (inet_pton(AF_INET, t.c_str(), buf) != 1 && inet_pton(AF_INET6, t.c_str(), buf) != 1)
    throw std::invalid_argument("\"" + t +
                                "\" is not an IPv4 or IPv6 address (use 0.0.0.0 or :: for all "
                                "interfaces, 127.0.0.1 for this host only)");
}

void check_not_empty(std::string_view text) {
  if (trim(text).empty()) throw std::invalid_argument("must not be empty");
}

void check_database_name(std::string_view name) {
  // PostgreSQL's NAMEDATALEN - 1.
  constexpr size_t max_identifier_bytes = 63;
  if (name.empty()) throw std::invalid_argument("a database name must not be empty");
  if (name.size() > max_identifier_bytes)
    throw std::invalid_argument("database name \"" + std::string(name) + "\" is longer than 63 bytes");
}

// "a, b,c" -> {"a", "b", "c"} (a list setting given as a flag or variable).
std::vector<std::string> split_list_text(std::string_view text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    names.push_back(trim(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return names;
}

std::string render_string_list(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + toml_string_literal(names[i]);
  return out + "]";
}

// "", "all", or a comma list of device ordinals.
void check_gpu_devices(std::string_view text) {
  if (text.empty() || text == "all") return;
  for (const std::string& item : split_list_text(text)) {
    if (item.empty() || item.size() > 4 || item.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument("\"" + std::string(text) + "\" is neither all nor a list of device numbers");
    }
  }
}

std::vector<Setting> build_table() {
  constexpr int64_t max_port = 65535;
  std::vector<Setting> t;
  t.push_back(string_setting("listen_address", "ADDRESS",
                             "IP address the PostgreSQL listener binds",
                             [](Config& c) -> std::string& { return c.listen_address; },
                             check_ip_address));
  t.push_back(integer_setting<uint16_t>("port", "PORT", "PostgreSQL listener port",
                                        [](Config& c) -> uint16_t& { return c.port; }, 1, max_port));
  t.push_back(integer_setting<int>("max_connections", "N",
                                   "Most concurrent client sessions; more are refused with 53300",
                                   [](Config& c) -> int& { return c.max_connections; }, 1, 100000));
  t.push_back(integer_setting<int>(
      "superuser_reserved_connections", "N",
      "Of max_connections, slots only superusers may take (less than max_connections)",
      [](Config& c) -> int& { return c.superuser_reserved_connections; }, 0, 100000));
  {
    Setting s = base("superusers", "NAME[,NAME...]",
                     "Users that may take the superuser_reserved_connections slots",
                     SettingKind::string_list);
    s.set_list = [](Config& c, const std::vector<std::string>& names) { c.superusers = names; };
    s.set_text = [list = s.set_list](Config& c, std::string_view text) {
      list(c, split_list_text(text));
    };
    s.render = [](const Config& c) { return render_string_list(c.superusers); };
    t.push_back(std::move(s));
  }
  // PostgreSQL's range for authentication_timeout: 1 s to 10 min.
  t.push_back(integer_setting<int>(
      "authentication_timeout", "SECONDS",
      "Seconds a connection may take to finish startup and authentication before it is closed",
      [](Config& c) -> int& { return c.authentication_timeout_s; }, 1, 600));
  t.push_back(bytes_setting<uint32_t>("max_message_bytes",
                                      "Largest protocol message accepted; larger ones are 08P01",
                                      [](Config& c) -> uint32_t& { return c.max_message_bytes; },
                                      1024, 1ull << 30));
  t.push_back(string_setting("http_address", "ADDRESS",
                             "IP address of the HTTP admin endpoint (keep it local unless protected)",
                             [](Config& c) -> std::string& { return c.http_address; },
                             check_ip_address));
  t.push_back(integer_setting<uint16_t>("http_port", "PORT",
                                        "HTTP admin endpoint port; 0 disables the endpoint",
                                        [](Config& c) -> uint16_t& { return c.http_port; }, 0,
                                        max_port));
  {
    Setting s = string_setting("http_token", "TOKEN",
                               "Bearer token the admin endpoint requires; empty = none",
                               [](Config& c) -> std::string& { return c.http_token; });
    s.secret = true;
    t.push_back(std::move(s));
  }
  t.push_back(string_setting("data_dir", "PATH",
                             "Directory of the catalog and column chunk files (created if missing)",
                             [](Config& c) -> std::string& { return c.data_dir; }, check_not_empty));
  {
    Setting s = base("databases", "NAME[,NAME...]",
                     "Database names clients may connect to", SettingKind::string_list);
    s.set_list = [](Config& c, const std::vector<std::string>& names) {
      if (names.empty()) throw std::invalid_argument("at least one database is needed");
      for (auto& n : names) check_database_name(n);
      c.databases = names;
    };
    s.set_text = [list = s.set_list](Config& c, std::string_view text) {
      list(c, split_list_text(text));
    };
    s.render = [](const Config& c) { return render_string_list(c.databases); };
    t.push_back(std::move(s));
  }
  {
    Setting s = base("users", "NAME:METHOD[:PASSWORD][,...]",
                     "Users and authentication (trust|password|md5|scram-sha-256); in TOML an "
                     "array of [[users]] tables",
                     SettingKind::users);
    s.set_text = [](Config& c, std::string_view text) { c.users = parse_users_text(text); };
    s.render = [](const Config& c) {
      std::string out;
      for (auto& u : c.users) {
        out += "[[users]]\nname = " + toml_string_literal(u.name) + "\nmethod = " +
               toml_string_literal(auth_method_name(u.method)) + "\n";
        if (!u.scram_verifier.empty())
          out += "scram_verifier = " + toml_string_literal(u.scram_verifier) + "\n";
        if (!u.md5_hash.empty()) out += "md5_hash = " + toml_string_literal(u.md5_hash) + "\n";
      }
      return out;
    };
    t.push_back(std::move(s));
  }
  t.push_back(string_setting("tls_cert_file", "PATH",
                             "PEM certificate; TLS is enabled when this and tls_key_file are set",
                             [](Config& c) -> std::string& { return c.tls_cert_file; }));
  t.push_back(string_setting("tls_key_file", "PATH", "PEM private key of the certificate",
                             [](Config& c) -> std::string& { return c.tls_key_file; }));
  t.push_back(string_setting("tls_ca_file", "PATH",
                             "PEM CA bundle for client certificates; empty = not requested",
                             [](Config& c) -> std::string& { return c.tls_ca_file; }));
  t.push_back(integer_setting<int>("gpu_device", "N",
                                   "CUDA device ordinal; -1 = first GPU if any, -2 = never use a GPU",
                                   [](Config& c) -> int& { return c.gpu_device; }, -2, 1023));
  t.push_back(string_setting("gpu_devices", "all|N[,N...]",
                             "GPUs a table's chunks are spread over (each device aggregates its own, the partial "
                             "states are merged); empty = gpu_device's one device",
                             [](Config& c) -> std::string& { return c.gpu_devices; }, check_gpu_devices));
  t.push_back(bytes_setting<uint64_t>("gpu_memory_budget",
                                      "Device memory Tally may use; 0 = 80% of free device memory",
                                      [](Config& c) -> uint64_t& { return c.gpu_memory_budget; }, 0,
                                      std::numeric_limits<int64_t>::max()));
  t.push_back(bytes_setting<uint64_t>("column_cache_bytes",
                                      "Device memory for cached column chunks; 0 = half the GPU budget",
                                      [](Config& c) -> uint64_t& { return c.column_cache_bytes; }, 0,
                                      std::numeric_limits<int64_t>::max()));
  t.push_back(integer_setting<int>("cpu_threads", "N",
                                   "Worker threads of the CPU engine and of COPY FROM parsing; 0 = hardware concurrency",
                                   [](Config& c) -> int& { return c.cpu_threads; }, 0, 4096));
  t.push_back(bytes_setting<uint64_t>("cpu_memory_budget",
                                      "Host memory one statement may hold (hash tables, DISTINCT sets, sorts, results); past it 53200; "
                                      "0 = server_memory_budget",
                                      [](Config& c) -> uint64_t& { return c.cpu_memory_budget; }, 0,
                                      std::numeric_limits<int64_t>::max()));
  t.push_back(bytes_setting<uint64_t>("server_memory_budget",
                                      "Host memory all statements together may hold; past it 53200; 0 = three quarters of "
                                      "the host's memory (or its cgroup's limit) less the chunk cache",
                                      [](Config& c) -> uint64_t& { return c.server_memory_budget; }, 0,
                                      std::numeric_limits<int64_t>::max()));
  t.push_back(bytes_setting<uint64_t>("chunk_cache_bytes",
                                      "Host memory for decoded chunks of stored columns, kept between statements; "
                                      "0 = a third of the host's memory (or its cgroup's limit)",
                                      [](Config& c) -> uint64_t& { return c.chunk_cache_bytes; }, 0,
                                      std::numeric_limits<int64_t>::max()));
  t.push_back(bool_setting("pretouch_heap",
                           "Fault in at start the free heap that large queries reuse (three quarters of an eighth of the "
                           "host's memory, at least 2.25 GB), so that the first ones run as fast as their repeats; "
                           "tallyd holds that memory from its start",
                           [](Config& c) -> bool& { return c.pretouch_heap; }));
  t.push_back(integer_setting<uint32_t>("chunk_rows", "N", "Rows per stored chunk",
                                        [](Config& c) -> uint32_t& { return c.chunk_rows; }, 1,
                                        1ll << 30));
  t.push_back(bool_setting("tuning.enabled", "Refine launch configurations while queries run",
                           [](Config& c) -> bool& { return c.tuning.enabled; }));
  t.push_back(real_setting("tuning.similarity_s",
                           "DaMoN'19 similarity s: times within this fraction are a plateau",
                           [](Config& c) -> double& { return c.tuning.similarity_s; }, 0.0, 1.0));
  t.push_back(real_setting("tuning.pruning_p",
                           "DaMoN'19 pruning factor p: branches slower than best*p are dropped",
                           [](Config& c) -> double& { return c.tuning.pruning_p; }, 1.0, 10.0));
  t.push_back(real_setting("tuning.v_max",
                           "DaMoN'19 largest relative variation of one measurement",
                           [](Config& c) -> double& { return c.tuning.v_max; }, 0.0, 1.0));
  t.push_back(integer_setting<int>("tuning.b_max", "N",
                                   "DaMoN'19 most chunks spent on one measurement",
                                   [](Config& c) -> int& { return c.tuning.b_max; }, 1, 1000));
  t.push_back(real_setting("tuning.explore_rate",
                           "Probability that a query explores another variant (vw-greedy)",
                           [](Config& c) -> double& { return c.tuning.explore_rate; }, 0.0, 1.0));
  t.push_back(real_setting("tuning.warm_search_share",
                           "Share of a warm query's chunks that continue the search or explore (the rest run the cached best)",
                           [](Config& c) -> double& { return c.tuning.warm_search_share; }, 0.0, 1.0));
  t.push_back(integer_setting<uint64_t>("statement_timeout_ms", "MS",
                                        "Default statement_timeout; 0 = none (cancels with 57014)",
                                        [](Config& c) -> uint64_t& { return c.statement_timeout_ms; },
                                        0, std::numeric_limits<int32_t>::max()));
  t.push_back(integer_setting<uint64_t>(
      "shutdown_grace_ms", "MS",
      "On SIGTERM, how long running queries may finish before they are cancelled",
      [](Config& c) -> uint64_t& { return c.shutdown_grace_ms; }, 0, 24ll * 3600 * 1000));
  t.push_back(enum_setting<LogLevel>("log_level",
                                     "Least severe log events written; info: a line per connection "
                                     "and error, and per statement as log_statement says; debug: "
                                     "a line per statement, with its text",
                                     [](Config& c) -> LogLevel& { return c.log_level; },
                                     {{"debug", LogLevel::debug},
                                      {"info", LogLevel::info},
                                      {"warning", LogLevel::warning},
                                      {"error", LogLevel::error}}));
  t.push_back(enum_setting<LogStatement>(
      "log_statement",
      "Statements that get a query line at info level (duration, engine, variant, rows scanned): "
      "none, scans (statements that read table rows) or all; errors are always logged",
      [](Config& c) -> LogStatement& { return c.log_statement; },
      {{"none", LogStatement::none}, {"scans", LogStatement::scans}, {"all", LogStatement::all}}));
  t.push_back(enum_setting<LogFormat>("log_format", "Log lines as key=value text or JSON",
                                      [](Config& c) -> LogFormat& { return c.log_format; },
                                      {{"text", LogFormat::text}, {"json", LogFormat::json}}));
  return t;
}

}  // namespace

const std::vector<Setting>& setting_table() {
  static const std::vector<Setting> table = build_table();
  return table;
}

const Setting* find_setting_by_key(std::string_view key) {
  for (auto& s : setting_table())
    if (s.key == key) return &s;
  return nullptr;
}
const Setting* find_setting_by_flag(std::string_view flag) {
  for (auto& s : setting_table())
    if (s.flag == flag) return &s;
  return nullptr;
}
const Setting* find_setting_by_env(std::string_view env) {
  for (auto& s : setting_table())
    if (s.env == env) return &s;
  return nullptr;
}

bool is_bool_text(std::string_view text) {
  try {
    parse_bool_text(text);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

bool parse_bool_text(std::string_view text) {
  // The spellings PostgreSQL accepts for a boolean setting.
  std::string l = ascii_lower(trim(text));
  if (l == "true" || l == "on" || l == "yes" || l == "1") return true;
  if (l == "false" || l == "off" || l == "no" || l == "0") return false;
  throw std::invalid_argument("\"" + std::string(text) + "\" is not a boolean (true or false)");
}

int64_t parse_integer_text(std::string_view text) {
  std::string t = trim(text);
  int64_t v = 0;
  const char* begin = t.data();
  if (!t.empty() && t[0] == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, t.data() + t.size(), v);
  if (t.empty() || ec == std::errc::invalid_argument || ptr != t.data() + t.size())
    throw std::invalid_argument("\"" + std::string(text) + "\" is not an integer");
  if (ec == std::errc::result_out_of_range)
    throw std::invalid_argument("\"" + std::string(text) + "\" is out of range");
  return v;
}

uint64_t parse_bytes_text(std::string_view text) {
  std::string t = trim(text);
  size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  if (digits == 0)
    throw std::invalid_argument("\"" + std::string(text) +
                                "\" is not a size (bytes, or a number with kB, MB, GB or TB)");
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + digits, v);
  if (ec != std::errc()) throw std::invalid_argument("\"" + std::string(text) + "\" is out of range");
  std::string unit = trim(std::string_view(t).substr(digits));
  // PostgreSQL's memory units are powers of 1024; the IEC spellings mean the same.
  static const std::pair<const char*, uint64_t> units[] = {
      {"", 1},         {"B", 1},          {"kB", 1ull << 10}, {"KB", 1ull << 10},
      {"KiB", 1ull << 10}, {"MB", 1ull << 20}, {"MiB", 1ull << 20}, {"GB", 1ull << 30},
      {"GiB", 1ull << 30}, {"TB", 1ull << 40}, {"TiB", 1ull << 40}};
  for (auto [name, factor] : units) {
    if (unit == name) {
      if (v > std::numeric_limits<uint64_t>::max() / factor)
        throw std::invalid_argument("\"" + std::string(text) + "\" is out of range");
      return v * factor;
    }
  }
  throw std::invalid_argument("\"" + std::string(text) +
                              "\" has an unknown unit (valid units: B, kB, MB, GB, TB)");
}

double parse_real_text(std::string_view text) {
  std::string t = trim(text);
  double v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(v))
    throw std::invalid_argument("\"" + std::string(text) + "\" is not a number");
  return v;
}

AuthMethod parse_auth_method(std::string_view text) {
  std::string l = ascii_lower(trim(text));
  if (l == "trust") return AuthMethod::trust;
  if (l == "password") return AuthMethod::password;
  if (l == "md5") return AuthMethod::md5;
  if (l == "scram-sha-256") return AuthMethod::scram_sha_256;
  throw std::invalid_argument("\"" + std::string(text) +
                              "\" is not an authentication method (trust, password, md5, "
                              "scram-sha-256)");
}

std::string toml_string_literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

void set_user_password(UserConfig& user, std::string_view password) {
  // Like CREATE ROLE ... PASSWORD: a value that already is a verifier or an
  // md5 hash is stored as given, anything else is a plain password.
  if (password.starts_with("SCRAM-SHA-256$")) {
    if (!parse_scram_verifier(password))
      throw std::invalid_argument("malformed SCRAM-SHA-256 verifier for user \"" + user.name + "\"");
    user.scram_verifier = std::string(password);
    return;
  }
  if (is_md5_hash(password)) {
    user.md5_hash = std::string(password);
    return;
  }
  if (password.empty()) throw std::invalid_argument("empty password for user \"" + user.name + "\"");
  // SCRAM hashes the SASLprep'd password, as PostgreSQL's verifiers and
  // libpq's client proofs do (md5 uses the raw bytes, as PostgreSQL does).
  user.scram_verifier = make_scram_verifier(saslprep_password(password));
  // The md5 hash is as good as the password to an attacker: keep it only when
  // md5 authentication needs it.
  if (user.method == AuthMethod::md5) user.md5_hash = make_md5_hash(password, user.name);
}

std::vector<UserConfig> parse_users_text(std::string_view text) {
  std::vector<UserConfig> users;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    start = comma + 1;
    size_t c1 = item.find(':');
    if (c1 == std::string_view::npos)
      throw std::invalid_argument("user \"" + std::string(item) +
                                  "\" is not NAME:METHOD[:PASSWORD]");
    UserConfig user;
    user.name = trim(item.substr(0, c1));
    if (user.name.empty()) throw std::invalid_argument("a user name must not be empty");
    std::string_view rest = item.substr(c1 + 1);
    size_t c2 = rest.find(':');
    user.method = parse_auth_method(rest.substr(0, c2));
    if (c2 != std::string_view::npos) set_user_password(user, rest.substr(c2 + 1));
    users.push_back(std::move(user));
  }
  return users;
}

}  // namespace tally::config
