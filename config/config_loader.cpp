#include "config/config_loader.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "config/password_hash.hpp"
#include "config/setting_table.hpp"

#ifndef TALLY_VERSION
#define TALLY_VERSION "0.0.0"
#endif

namespace tally::config {
namespace {

// Collects problems while every source is applied, so one run reports them all.
class Problems {
 public:
  void add(std::string text) { list_.push_back(std::move(text)); }
  void bad_value(const std::string& key, const std::string& source, const std::string& reason) {
    add("setting \"" + key + "\" from " + source + ": " + reason);
  }
  bool empty() const { return list_.empty(); }
  std::vector<std::string>& list() { return list_; }

 private:
  std::vector<std::string> list_;
};

std::string_view node_type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "nothing";
  }
}

std::string_view expected_name(SettingKind kind) {
  switch (kind) {
    case SettingKind::string: return "a string";
    case SettingKind::boolean: return "a boolean";
    case SettingKind::integer: return "an integer";
    case SettingKind::real: return "a number";
    case SettingKind::bytes: return "an integer or a size string like \"64MB\"";
    case SettingKind::enumeration: return "a string";
    case SettingKind::string_list: return "an array of strings";
    case SettingKind::users: return "an array of [[users]] tables";
  }
  return "a value";
}

std::string where(const std::string& file, const toml::node& node) {
  return file + ":" + std::to_string(node.source().begin.line);
}

// Converts a TOML scalar to the text the setting parses, checking its type.
// Returns false (after recording the problem) on a type mismatch.
bool toml_to_text(const Setting& s, const toml::node& node, std::string& text) {
  switch (s.kind) {
    case SettingKind::string:
    case SettingKind::enumeration:
      if (auto v = node.value_exact<std::string>()) { text = *v; return true; }
      return false;
    case SettingKind::boolean:
      if (auto v = node.value_exact<bool>()) { text = *v ? "true" : "false"; return true; }
      return false;
    case SettingKind::integer:
      if (auto v = node.value_exact<int64_t>()) { text = std::to_string(*v); return true; }
      return false;
    case SettingKind::real:
      if (auto v = node.value_exact<double>()) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", *v);
        text = buf;
        return true;
      }
      if (auto v = node.value_exact<int64_t>()) { text = std::to_string(*v); return true; }
      return false;
    case SettingKind::bytes:
      if (auto v = node.value_exact<int64_t>()) {
        if (*v < 0) { text = "-"; return true; }  // parse_bytes_text rejects it with a reason
        text = std::to_string(*v);
        return true;
      }
      if (auto v = node.value_exact<std::string>()) { text = *v; return true; }
      return false;
    default:
      return false;
  }
}

void apply_toml_users(Config& config, const toml::node& node, const std::string& file,
                      Problems& problems) {
  const toml::array* array = node.as_array();
  if (!array) {
    problems.bad_value("users", where(file, node),
                       "expected an array of [[users]] tables, got " +
                           std::string(node_type_name(node.type())));
    return;
  }
  std::vector<UserConfig> users;
  for (const toml::node& item : *array) {
    const toml::table* table = item.as_table();
    std::string loc = where(file, item);
    if (!table) {
      problems.bad_value("users", loc, "each user must be a table with name and method");
      continue;
    }
    UserConfig user;
    bool ok = true;
    std::string password;
    bool has_method = false;
    for (auto&& [k, v] : *table) {
      std::string key(k.str());
      std::string vloc = where(file, v);
      auto text = v.value_exact<std::string>();
      if (key != "name" && key != "method" && key != "password" && key != "scram_verifier" &&
          key != "md5_hash") {
        problems.add("unknown setting \"users." + key + "\" in " + vloc +
                     " (a user has name, method, password, scram_verifier, md5_hash)");
        ok = false;
        continue;
      }
      if (!text) {
        problems.bad_value("users." + key, vloc,
                           "expected a string, got " + std::string(node_type_name(v.type())));
        ok = false;
        continue;
      }
      try {
        if (key == "name") user.name = *text;
        if (key == "method") {
          has_method = true;  // a bad method is reported once, as a bad value
          user.method = parse_auth_method(*text);
        }
        if (key == "password") password = *text;
        if (key == "scram_verifier") {
          if (!parse_scram_verifier(*text))
            throw std::invalid_argument("not a SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey> verifier");
          user.scram_verifier = *text;
        }
        if (key == "md5_hash") {
          if (!is_md5_hash(*text)) throw std::invalid_argument("not \"md5\" followed by 32 hex digits");
          user.md5_hash = *text;
        }
      } catch (const std::invalid_argument& e) {
        problems.bad_value("users." + key, vloc, e.what());
        ok = false;
      }
    }
    if (user.name.empty()) {
      problems.bad_value("users.name", loc, "every user needs a non-empty name");
      ok = false;
    }
    if (!has_method) {
      problems.bad_value("users.method", loc,
                         "user \"" + user.name + "\" needs a method (trust, password, md5, scram-sha-256)");
      ok = false;
    }
    if (ok && !password.empty()) {
      try {
        set_user_password(user, password);
      } catch (const std::invalid_argument& e) {
        problems.bad_value("users.password", loc, e.what());
        ok = false;
      }
    }
    if (ok) users.push_back(std::move(user));
  }
  config.users = std::move(users);
}

void apply_toml_table(Config& config, const toml::table& table, const std::string& prefix,
                      const std::string& file, Problems& problems,
                      std::map<std::string, std::string>& sources) {
  for (auto&& [k, node] : table) {
    std::string key = prefix + std::string(k.str());
    std::string loc = where(file, node);
    if (key == "users") {
      apply_toml_users(config, node, file, problems);
      sources["users"] = loc;
      continue;
    }
    if (const Setting* s = find_setting_by_key(key)) {
      if (s->kind == SettingKind::string_list) {
        const toml::array* array = node.as_array();
        std::vector<std::string> items;
        bool ok = array != nullptr;
        if (array)
          for (auto& item : *array) {
            if (auto v = item.value_exact<std::string>()) items.push_back(*v);
            else ok = false;
          }
        if (!ok) {
          problems.bad_value(key, loc, "expected an array of strings, got " +
                                           std::string(node_type_name(node.type())));
          continue;
        }
        try {
          s->set_list(config, items);
          sources[key] = loc;
        } catch (const std::invalid_argument& e) {
          problems.bad_value(key, loc, e.what());
        }
        continue;
      }
      std::string text;
      if (!toml_to_text(*s, node, text)) {
        problems.bad_value(key, loc, "expected " + std::string(expected_name(s->kind)) + ", got " +
                                         std::string(node_type_name(node.type())));
        continue;
      }
      try {
        s->set_text(config, text);
        sources[key] = loc;
      } catch (const std::invalid_argument& e) {
        problems.bad_value(key, loc, e.what());
      }
      continue;
    }
    // A table whose keys are settings ("[tuning]") is walked; anything else is unknown.
    bool is_section = false;
    for (auto& s : setting_table())
      if (s.key.starts_with(key + ".")) is_section = true;
    if (is_section) {
      if (const toml::table* sub = node.as_table())
        apply_toml_table(config, *sub, key + ".", file, problems, sources);
      else
        problems.bad_value(key, loc, "expected a table, got " + std::string(node_type_name(node.type())));
      continue;
    }
    problems.add("unknown setting \"" + key + "\" in " + loc);
  }
}

void apply_file(Config& config, const std::string& file, const std::string& given_by,
                Problems& problems, std::map<std::string, std::string>& sources) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    problems.add("configuration file \"" + file + "\" (from " + given_by +
                 ") cannot be read: " + std::strerror(errno));
    return;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    toml::table table = toml::parse(text.str(), file);
    apply_toml_table(config, table, "", file, problems, sources);
  } catch (const toml::parse_error& e) {
    problems.add("configuration file " + file + ":" + std::to_string(e.source().begin.line) + ":" +
                 std::to_string(e.source().begin.column) + ": " + std::string(e.description()));
  }
}

void apply_text(Config& config, const Setting& s, std::string_view text, const std::string& source,
                Problems& problems, std::map<std::string, std::string>& sources) {
  try {
    s.set_text(config, text);
    sources[s.key] = source;
  } catch (const std::invalid_argument& e) {
    problems.bad_value(s.key, source, e.what());
  }
}

std::string source_or_default(const std::map<std::string, std::string>& sources,
                              const std::string& key) {
  auto it = sources.find(key);
  return it == sources.end() ? "default" : it->second;
}

void check_readable_file(const std::string& key, const std::string& path,
                         const std::map<std::string, std::string>& sources, Problems& problems) {
  if (path.empty()) return;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    problems.bad_value(key, source_or_default(sources, key),
                       "file \"" + path + "\" does not exist or is not a regular file");
    return;
  }
  std::ifstream in(path);
  if (!in)
    problems.bad_value(key, source_or_default(sources, key),
                       "file \"" + path + "\" cannot be read: " + std::strerror(errno));
}

void check_data_dir(const Config& config, const std::map<std::string, std::string>& sources,
                    Problems& problems) {
  const std::string& dir = config.data_dir;
  std::string source = source_or_default(sources, "data_dir");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    problems.bad_value("data_dir", source, "\"" + dir + "\" exists and is not a directory");
    return;
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    problems.bad_value("data_dir", source,
                       "directory \"" + dir + "\" cannot be created: " + ec.message());
    return;
  }
  if (::access(dir.c_str(), R_OK | W_OK | X_OK) != 0)
    problems.bad_value("data_dir", source,
                       "directory \"" + dir + "\" is not readable and writable: " +
                           std::strerror(errno));
}

void validate(const Config& config, const std::map<std::string, std::string>& sources,
              Problems& problems) {
  check_data_dir(config, sources, problems);

  bool cert = !config.tls_cert_file.empty(), key = !config.tls_key_file.empty();
  if (cert != key) {
    const char* missing = cert ? "tls_key_file" : "tls_cert_file";
    const char* given = cert ? "tls_cert_file" : "tls_key_file";
    problems.bad_value(given, source_or_default(sources, given),
                       std::string("TLS needs both tls_cert_file and tls_key_file; ") + missing +
                           " is not set");
  }
  check_readable_file("tls_cert_file", config.tls_cert_file, sources, problems);
  check_readable_file("tls_key_file", config.tls_key_file, sources, problems);
  check_readable_file("tls_ca_file", config.tls_ca_file, sources, problems);
  if (!config.tls_ca_file.empty() && !cert)
    problems.bad_value("tls_ca_file", source_or_default(sources, "tls_ca_file"),
                       "a CA file needs TLS (tls_cert_file and tls_key_file)");

  if (config.superuser_reserved_connections >= config.max_connections)
    problems.bad_value("superuser_reserved_connections",
                       source_or_default(sources, "superuser_reserved_connections"),
                       "superuser_reserved_connections (" +
                           std::to_string(config.superuser_reserved_connections) +
                           ") must be less than max_connections (" +
                           std::to_string(config.max_connections) + ")");

  if (config.http_port != 0 && config.http_port == config.port)
    problems.bad_value("http_port", source_or_default(sources, "http_port"),
                       "the admin endpoint cannot share the PostgreSQL port " +
                           std::to_string(config.port));

  std::string users_source = source_or_default(sources, "users");
  if (config.users.empty())
    problems.bad_value("users", users_source, "at least one user is needed to connect");
  std::set<std::string> names;
  for (const UserConfig& u : config.users) {
    if (!names.insert(u.name).second)
      problems.bad_value("users", users_source, "user \"" + u.name + "\" is defined twice");
    bool has_scram = !u.scram_verifier.empty(), has_md5 = !u.md5_hash.empty();
    switch (u.method) {
      case AuthMethod::trust:
        break;
      case AuthMethod::scram_sha_256:
        // An md5 hash cannot answer a SCRAM exchange (PostgreSQL refuses too).
        if (!has_scram)
          problems.bad_value("users", users_source,
                             "user \"" + u.name +
                                 "\" uses scram-sha-256 and needs a password or scram_verifier");
        break;
      case AuthMethod::md5:
        // With only a SCRAM verifier, md5 users are authenticated with SCRAM,
        // as PostgreSQL does.
      case AuthMethod::password:
        if (!has_scram && !has_md5)
          problems.bad_value("users", users_source,
                             "user \"" + u.name + "\" uses " +
                                 std::string(auth_method_name(u.method)) +
                                 " and needs a password, scram_verifier or md5_hash");
        break;
    }
  }
}

bool is_flag_with_value(std::string_view arg, std::string_view name, std::string& value,
                        bool& inline_value) {
  if (arg == name) { inline_value = false; return true; }
  if (arg.size() > name.size() && arg.starts_with(name) && arg[name.size()] == '=') {
    value = std::string(arg.substr(name.size() + 1));
    inline_value = true;
    return true;
  }
  return false;
}

std::string version_text() { return std::string("tallyd (Tally) ") + TALLY_VERSION + "\n"; }

}  // namespace

std::string LoadResult::source_of(const std::string& key) const {
  return source_or_default(sources, key);
}

namespace {

// Empty when address:port can be bound, else why not.
std::string try_bind(const std::string& address, uint16_t port) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (inet_pton(AF_INET, address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    length = sizeof *v4;
  } else if (inet_pton(AF_INET6, address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    length = sizeof *v6;
  } else {
    return "\"" + address + "\" is not an IP address";
  }
  int fd = ::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("cannot create a socket: ") + std::strerror(errno);
  // The listeners set SO_REUSEADDR too, so connections in TIME_WAIT from an
  // earlier run are not mistaken for a port in use.
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  std::string problem;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0) {
    int err = errno;
    std::string where = (storage.ss_family == AF_INET6 ? "[" + address + "]" : address) + ":" +
                        std::to_string(port);
    if (err == EADDRINUSE) problem = where + " is already in use";
    else if (err == EADDRNOTAVAIL) problem = where + ": this host has no such address";
    else if (err == EACCES) problem = where + ": permission denied (ports below 1024 need privileges)";
    else problem = where + ": " + std::strerror(err);
  } else if (::listen(fd, 1) != 0 && errno == EADDRINUSE) {
    problem = address + ":" + std::to_string(port) + " is already in use";
  }
  ::close(fd);
  return problem;
}

}  // namespace

void check_ports_available(const LoadResult& loaded) {
  Problems problems;
  const Config& c = loaded.config;
  if (std::string p = try_bind(c.listen_address, c.port); !p.empty())
    problems.bad_value("port", loaded.source_of("port"), p);
  if (c.http_port != 0)
    if (std::string p = try_bind(c.http_address, c.http_port); !p.empty())
      problems.bad_value("http_port", loaded.source_of("http_port"), p);
  if (!problems.empty()) throw ConfigError(std::move(problems.list()));
}

std::map<std::string, std::string> environment_map(char** envp) {
  std::map<std::string, std::string> env;
  for (char** e = envp; e && *e; ++e) {
    std::string_view item(*e);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
  }
  return env;
}

bool parse_log_level(std::string_view text, LogLevel& out) {
  const Setting* s = find_setting_by_key("log_level");
  Config c;
  try {
    s->set_text(c, text);
  } catch (const std::invalid_argument&) {
    return false;
  }
  out = c.log_level;
  return true;
}

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warning: return "warning";
    case LogLevel::error: return "error";
  }
  return "info";
}

std::string_view auth_method_name(AuthMethod method) {
  switch (method) {
    case AuthMethod::trust: return "trust";
    case AuthMethod::password: return "password";
    case AuthMethod::md5: return "md5";
    case AuthMethod::scram_sha_256: return "scram-sha-256";
  }
  return "trust";
}

std::vector<std::string> changed_settings(const Config& before, const Config& after) {
  std::vector<std::string> changed;
  for (const Setting& s : setting_table()) {
    if (s.kind == SettingKind::users) {
      bool same = before.users.size() == after.users.size();
      for (size_t i = 0; same && i < before.users.size(); ++i)
        same = before.users[i].name == after.users[i].name &&
               before.users[i].method == after.users[i].method;
      if (!same) changed.push_back(s.key);
    } else if (s.render(before) != s.render(after)) {
      changed.push_back(s.key);
    }
  }
  return changed;
}

std::string help_text() {
  const Config defaults;
  std::ostringstream out;
  out << "Usage: tallyd [--config FILE] [--SETTING VALUE ...]\n"
         "Tally: a PostgreSQL-compatible server for GROUP BY on GPUs.\n\n"
         "Settings come from defaults, then the TOML file, then flags, then TALLY_*\n"
         "environment variables; later sources win. Flags take --flag VALUE or --flag=VALUE.\n"
         "Sizes (BYTES) take a number of bytes or a unit: kB, MB, GB, TB (powers of 1024).\n\n"
         "  --config FILE\n      TOML configuration file (env TALLY_CONFIG)\n";
  for (const Setting& s : setting_table()) {
    out << "  " << s.flag << " " << s.value_name << "\n      " << s.help;
    if (s.kind == SettingKind::users) {
      out << "\n      default: tally:trust; also --user, repeatable (each adds a user)";
    } else {
      out << "\n      default: " << s.render(defaults);
    }
    out << "; toml " << s.key << "; env " << s.env << "\n";
  }
  out << "  --print-config\n      Print the effective configuration as TOML and exit\n"
         "  --help, -h\n      Print this help and exit\n"
         "  --version, -V\n      Print the version and exit\n";
  return out.str();
}

std::string render_config(const LoadResult& result) {
  std::ostringstream out;
  out << "# Effective configuration of tallyd; each value's source is in its comment.\n";
  std::string users_block;
  // Top-level keys first: after a [section] header every key belongs to it.
  for (bool top_level : {true, false}) {
    std::string section;
    for (const Setting& s : setting_table()) {
      std::string source = result.source_of(s.key);
      if (s.kind == SettingKind::users) {
        users_block = "# users from " + source + "\n" + s.render(result.config);
        continue;
      }
      size_t dot = s.key.rfind('.');
      if ((dot == std::string::npos) != top_level) continue;
      std::string this_section = top_level ? "" : s.key.substr(0, dot);
      std::string name = top_level ? s.key : s.key.substr(dot + 1);
      if (this_section != section) {
        out << "\n[" << this_section << "]\n";
        section = this_section;
      }
      std::string value = s.secret ? (result.config.http_token.empty() ? "\"\"" : "\"<hidden>\"")
                                   : s.render(result.config);
      out << name << " = " << value << "  # " << source << "\n";
    }
  }
  // [[users]] may not precede a [section]'s keys, so it comes last.
  out << "\n" << users_block;
  return out.str();
}

LoadResult load_config(int argc, const char* const* argv,
                       const std::map<std::string, std::string>& env) {
  LoadResult result;
  Problems problems;
  bool print_config = false;

  // Pass 1: flags, remembered in order, so the file can be applied first.
  struct FlagValue {
    const Setting* setting;
    std::string value;
    std::string flag;
  };
  std::vector<FlagValue> flags;
  std::string config_flag;
  std::vector<UserConfig> flag_users;
  bool have_flag_users = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      result.action = LoadAction::exit_ok;
      result.output = help_text();
      return result;
    }
    if (arg == "--version" || arg == "-V") {
      result.action = LoadAction::exit_ok;
      result.output = version_text();
      return result;
    }
    if (arg == "--print-config") {
      print_config = true;
      continue;
    }
    if (!arg.starts_with("--")) {
      problems.add("unexpected command-line argument \"" + std::string(arg) +
                   "\" (settings are given as --name VALUE; see --help)");
      continue;
    }
    std::string name(arg.substr(0, arg.find('=')));
    const Setting* s = find_setting_by_flag(name);
    if (!s && name != "--config" && name != "--user") {
      problems.add("unknown command-line flag " + name + " (see --help)");
      continue;
    }
    std::string value;
    bool inline_value = false;
    is_flag_with_value(arg, name, value, inline_value);
    if (!inline_value) {
      // A boolean flag takes the next argument when it is a boolean word
      // (--flag false, as --help writes it), else it is bare and means true;
      // every other flag takes the next argument.
      if (s && s->kind == SettingKind::boolean) {
        value = "true";
        if (i + 1 < argc && is_bool_text(argv[i + 1])) value = argv[++i];
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        problems.add("command-line flag " + name + " needs a value");
        continue;
      }
    }
    if (name == "--config") {
      config_flag = value;
    } else if (name == "--user" || s->kind == SettingKind::users) {
      // --user may repeat; together the flags replace the file's users.
      try {
        for (auto& u : parse_users_text(value)) flag_users.push_back(std::move(u));
        have_flag_users = true;
      } catch (const std::invalid_argument& e) {
        problems.bad_value("users", name, e.what());
      }
    } else {
      flags.push_back({s, value, name});
    }
  }

  // The file: TALLY_CONFIG beats --config, like every other setting.
  if (auto it = env.find("TALLY_CONFIG"); it != env.end() && !it->second.empty()) {
    result.config_file = it->second;
    apply_file(result.config, it->second, "TALLY_CONFIG", problems, result.sources);
  } else if (!config_flag.empty()) {
    result.config_file = config_flag;
    apply_file(result.config, config_flag, "--config", problems, result.sources);
  }

  for (const FlagValue& f : flags) apply_text(result.config, *f.setting, f.value, f.flag, problems, result.sources);
  if (have_flag_users) {
    result.config.users = std::move(flag_users);
    result.sources["users"] = "--user";
  }

  for (const auto& [name, value] : env) {
    if (!name.starts_with("TALLY_") || name == "TALLY_CONFIG") continue;
    if (const Setting* s = find_setting_by_env(name)) {
      apply_text(result.config, *s, value, name, problems, result.sources);
    } else {
      // Other tools share the prefix (build scripts' TALLY_BUILD_DIR), so an
      // unknown variable is reported but does not stop start-up.
      result.warnings.push_back("unknown environment variable " + name + " ignored");
    }
  }

  if (problems.empty()) validate(result.config, result.sources, problems);
  if (!problems.empty()) throw ConfigError(std::move(problems.list()));

  if (print_config) {
    result.action = LoadAction::exit_ok;
    result.output = render_config(result);
  }
  return result;
}

}  // namespace tally::config
