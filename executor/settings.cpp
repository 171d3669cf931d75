#include "executor/settings.hpp"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "common/error.hpp"

namespace tally::executor {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

using Kind = SettingDefinition::Kind;

// Millisecond-valued settings (statement_timeout, ...) are shown in the
// largest unit that divides them, as PostgreSQL's GUC_UNIT_MS display does.
bool is_time_setting(std::string_view name) {
  return name == "statement_timeout" || name == "lock_timeout" ||
         name == "idle_in_transaction_session_timeout" || name == "idle_session_timeout";
}

std::string canonical_milliseconds(const std::string& name, std::string_view value) {
  std::string v = lower(value);
  v.erase(std::remove(v.begin(), v.end(), ' '), v.end());
  size_t i = 0;
  while (i < v.size() && (std::isdigit(static_cast<unsigned char>(v[i])) || (i == 0 && v[i] == '-'))) ++i;
  if (i == 0 || (i == 1 && v[0] == '-')) {
    throw Error(SqlState::invalid_parameter_value,
                "invalid value for parameter \"" + name + "\": \"" + std::string(value) + "\"");
  }
  int64_t n = std::stoll(v.substr(0, i));
  const std::string unit = v.substr(i);
  int64_t factor = 1;
  if (unit.empty() || unit == "ms") factor = 1;
  else if (unit == "s") factor = 1000;
  else if (unit == "min") factor = 60'000;
  else if (unit == "h") factor = 3'600'000;
  else if (unit == "d") factor = 86'400'000;
  else {
    throw Error(SqlState::invalid_parameter_value,
                "invalid value for parameter \"" + name + "\": \"" + std::string(value) + "\"")
        .with_hint("Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".");
  }
  const int64_t ms = n * factor;
  if (ms < 0) {
    throw Error(SqlState::invalid_parameter_value,
                std::to_string(ms) + " ms is outside the valid range for parameter \"" + name +
                    "\" (0 .. 2147483647)");
  }
  if (ms == 0) return "0";
  if (ms % 86'400'000 == 0) return std::to_string(ms / 86'400'000) + "d";
  if (ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0) return std::to_string(ms / 60'000) + "min";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string canonical_datestyle(std::string_view value) {
  std::string style, order;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    const std::string t = lower(token);
    if (t == "iso") style = "ISO";
    else if (t == "sql") style = "SQL";
    else if (t == "postgres") style = "Postgres";
    else if (t == "german") { style = "German"; if (order.empty()) order = "DMY"; }
    else if (t == "dmy" || t == "euro" || t == "european") order = "DMY";
    else if (t == "mdy" || t == "us" || t == "noneuro" || t == "noneuropean") order = "MDY";
    else if (t == "ymd") order = "YMD";
    else {
      throw Error(SqlState::invalid_parameter_value,
                  "invalid value for parameter \"DateStyle\": \"" + std::string(value) + "\"")
          .with_detail("Unrecognized key word: \"" + token + "\".");
    }
    token.clear();
  };
  for (char c : value) {
    if (c == ',' || c == ' ' || c == '\t') flush(); else token.push_back(c);
  }
  flush();
  if (style.empty()) style = "ISO";
  if (order.empty()) order = "MDY";
  if (style != "ISO") {
    // Dates are rendered only in ISO style; answering in another style with
    // ISO text would be a silent wrong answer.
    throw Error(SqlState::feature_not_supported, "DateStyle \"" + style + "\" is not supported")
        .with_hint("Use DateStyle ISO.");
  }
  return style + ", " + order;
}

}  // namespace

std::string_view server_version() { return "15.18 (Tally 0.1.0)"; }
std::string_view server_version_num() { return "150018"; }
std::string version_string() {
  return "PostgreSQL 15.18 (Tally 0.1.0) on x86_64-pc-linux-gnu, compiled by gcc, 64-bit";
}

Settings::Settings() {
  auto add = [&](std::string name, std::string value, std::string description, bool reported = false,
                 bool read_only = false, Kind kind = Kind::string) {
    definitions_.push_back({std::move(name), std::move(value), std::move(description), reported, read_only, kind});
  };
  add("application_name", "", "Sets the application name to be reported in statistics and logs.", true);
  add("bytea_output", "hex", "Sets the output format for bytea.");
  add("client_encoding", "UTF8", "Sets the client's character set encoding.", true);
  add("client_min_messages", "notice", "Sets the message levels that are sent to the client.");
  add("DateStyle", "ISO, MDY", "Sets the display format for date and time values.", true);
  add("default_transaction_isolation", "read committed", "Sets the transaction isolation level of each new transaction.");
  add("default_transaction_read_only", "off", "Sets the default read-only status of new transactions.", true, false, Kind::boolean);
  add("escape_string_warning", "on", "Warn about backslash escapes in ordinary string literals.", false, false, Kind::boolean);
  add("extra_float_digits", "1", "Sets the number of digits displayed for floating-point values.", false, false, Kind::integer);
  add("idle_in_transaction_session_timeout", "0", "Sets the maximum allowed idle time between queries, when in a transaction.");
  add("in_hot_standby", "off", "Shows whether hot standby is currently active.", true, true, Kind::boolean);
  add("integer_datetimes", "on", "Shows whether datetimes are integer based.", true, true, Kind::boolean);
  add("IntervalStyle", "postgres", "Sets the display format for interval values.", true);
  add("is_superuser", "on", "Shows whether the current user is a superuser.", true, true, Kind::boolean);
  add("jit", "off", "Allow JIT compilation.", false, false, Kind::boolean);
  add("lc_collate", "C", "Shows the collation order locale.", false, true);
  add("lc_ctype", "C", "Shows the character classification and case conversion locale.", false, true);
  add("lc_messages", "C", "Sets the language in which messages are displayed.");
  add("lc_monetary", "C", "Sets the locale for formatting monetary amounts.");
  add("lc_numeric", "C", "Sets the locale for formatting numbers.");
  add("lc_time", "C", "Sets the locale for formatting date and time values.");
  add("lock_timeout", "0", "Sets the maximum allowed duration of any wait for a lock.");
  add("max_identifier_length", "63", "Shows the maximum identifier length.", false, true);
  add("max_parallel_workers_per_gather", "2", "Sets the maximum number of parallel processes per executor node.", false, false, Kind::integer);
  add("row_security", "on", "Enable row security.", false, false, Kind::boolean);
  add("search_path", "\"$user\", public", "Sets the schema search order for names that are not schema-qualified.");
  add("server_encoding", "UTF8", "Shows the server (database) character set encoding.", true, true);
  add("server_version", std::string(server_version()), "Shows the server version.", true, true);
  add("server_version_num", std::string(server_version_num()), "Shows the server version as an integer.", false, true);
  add("session_authorization", "", "Sets the session user name.", true, true);
  add("standard_conforming_strings", "on", "Causes '...' strings to treat backslashes literally.", true, false, Kind::boolean);
  add("statement_timeout", "0", "Sets the maximum allowed duration of any statement.");
  add("synchronous_commit", "on", "Sets the current transaction's synchronization level.");
  add("tally.engine", "auto", "Aggregation engine: auto, cpu, gpu or generic (the reference path).");
  add("tally.variant", "", "GPU aggregation variant to force (dense, shared_memory, global, sort, partitioned); empty: the tuner's choice.");
  add("tally.launch_config", "", "GPU launch configuration to force, e.g. tpb=256,bps=4,ff=50,rpt=4; empty: the tuner's choice.");
  add("TimeZone", "UTC", "Sets the time zone for displaying and interpreting time stamps.", true);
  add("transaction_isolation", "read committed", "Sets the current transaction's isolation level.");
  add("transaction_read_only", "off", "Sets the current transaction's read-only status.", false, false, Kind::boolean);
  add("work_mem", "4MB", "Sets the maximum memory to be used for query workspaces.");
  // Settings that pg_dump, pgcli and ORMs set or read and that change nothing
  // Tally does (no heap scans to synchronize, no CREATE FUNCTION, no XML).
  add("array_nulls", "on", "Enable input of NULL elements in arrays.", false, false, Kind::boolean);
  add("block_size", "8192", "Shows the size of a disk block.", false, true, Kind::integer);
  add("check_function_bodies", "on", "Check routine bodies during CREATE FUNCTION and CREATE PROCEDURE.", false, false,
      Kind::boolean);
  add("default_table_access_method", "heap", "Sets the default table access method for new tables.");
  add("default_tablespace", "", "Sets the default tablespace to create tables and indexes in.");
  add("max_function_args", "100", "Shows the maximum number of function arguments.", false, true, Kind::integer);
  add("max_index_keys", "32", "Shows the maximum number of index keys.", false, true, Kind::integer);
  add("quote_all_identifiers", "off", "When generating SQL fragments, quote all identifiers.", false, false, Kind::boolean);
  add("synchronize_seqscans", "on", "Enable synchronized sequential scans.", false, false, Kind::boolean);
  add("xmloption", "content",
      "Sets whether XML data in implicit parsing and serialization operations is to be considered as documents or "
      "content fragments.");
  for (const auto& def : definitions_) values_[lower(def.name)] = def.default_value;
}

const SettingDefinition* Settings::find(std::string_view name) const {
  const std::string key = lower(name);
  for (const auto& def : definitions_) {
    if (lower(def.name) == key) return &def;
  }
  return nullptr;
}

std::optional<std::string> Settings::get(std::string_view name) const {
  auto it = values_.find(lower(name));
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Settings::canonical_value(const SettingDefinition& def, std::string_view value) const {
  const std::string v = lower(value);
  switch (def.kind) {
    case Kind::boolean: {
      auto prefix = [&](std::string_view word, size_t min) {
        return v.size() >= min && v.size() <= word.size() && word.substr(0, v.size()) == v;
      };
      if (prefix("true", 1) || prefix("yes", 1) || v == "on" || v == "1") return "on";
      if (prefix("false", 1) || prefix("no", 1) || prefix("off", 2) || v == "0") return "off";
      throw Error(SqlState::invalid_parameter_value, "parameter \"" + def.name + "\" requires a Boolean value");
    }
    case Kind::integer: {
      size_t i = (v.size() > 1 && (v[0] == '-' || v[0] == '+')) ? 1 : 0;
      if (i == v.size() || !std::all_of(v.begin() + static_cast<long>(i), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
        throw Error(SqlState::invalid_parameter_value,
                    "invalid value for parameter \"" + def.name + "\": \"" + std::string(value) + "\"");
      }
      return std::to_string(std::stoll(v));
    }
    case Kind::string: break;
  }
  if (is_time_setting(def.name)) return canonical_milliseconds(def.name, value);
  if (def.name == "DateStyle") return canonical_datestyle(value);
  if (def.name == "client_encoding") {
    if (v == "utf8" || v == "utf-8" || v == "unicode") return "UTF8";
    throw Error(SqlState::feature_not_supported,
                "conversion between " + std::string(value) + " and UTF8 is not supported");
  }
  if (def.name == "IntervalStyle") {
    if (v == "postgres" || v == "postgres_verbose" || v == "sql_standard" || v == "iso_8601") return v;
    throw Error(SqlState::invalid_parameter_value,
                "invalid value for parameter \"IntervalStyle\": \"" + std::string(value) + "\"");
  }
  if (def.name == "tally.engine") {
    if (v == "auto" || v == "cpu" || v == "gpu" || v == "generic") return v;
    throw Error(SqlState::invalid_parameter_value,
                "invalid value for parameter \"tally.engine\": \"" + std::string(value) + "\"")
        .with_hint("Available values: auto, cpu, gpu, generic.");
  }
  if (def.name == "transaction_isolation" || def.name == "default_transaction_isolation") {
    if (v == "read committed" || v == "read uncommitted" || v == "repeatable read" || v == "serializable") return v;
    throw Error(SqlState::invalid_parameter_value,
                "invalid value for parameter \"" + def.name + "\": \"" + std::string(value) + "\"");
  }
  return std::string(value);
}

std::pair<std::string, bool> Settings::set(std::string_view name, std::string_view value) {
  ++generation_;
  const SettingDefinition* def = find(name);
  if (def == nullptr) {
    // Custom "prefix.name" placeholders are accepted, as in PostgreSQL.
    if (name.find('.') != std::string_view::npos) {
      values_[lower(name)] = std::string(value);
      return {lower(name), false};
    }
    throw Error(SqlState::undefined_object, "unrecognized configuration parameter \"" + std::string(name) + "\"");
  }
  if (def->read_only) {
    throw Error(SqlState::cant_change_runtime_param, "parameter \"" + def->name + "\" cannot be changed");
  }
  values_[lower(def->name)] = canonical_value(*def, value);
  return {def->name, def->reported};
}

std::pair<std::string, bool> Settings::reset(std::string_view name) {
  ++generation_;
  const SettingDefinition* def = find(name);
  if (def == nullptr) {
    if (name.find('.') != std::string_view::npos) {
      values_.erase(lower(name));
      return {lower(name), false};
    }
    throw Error(SqlState::undefined_object, "unrecognized configuration parameter \"" + std::string(name) + "\"");
  }
  if (def->read_only) {
    throw Error(SqlState::cant_change_runtime_param, "parameter \"" + def->name + "\" cannot be changed");
  }
  values_[lower(def->name)] = def->default_value;
  return {def->name, def->reported};
}

void Settings::set_default(std::string_view name, std::string_view value) {
  ++generation_;
  const SettingDefinition* def = find(name);
  if (!def) throw Error(SqlState::undefined_object, "unrecognized configuration parameter \"" + std::string(name) + "\"");
  const std::string canonical = canonical_value(*def, value);
  values_[lower(def->name)] = canonical;
  for (auto& d : definitions_) {
    if (lower(d.name) == lower(name)) d.default_value = canonical;
  }
}

std::optional<uint64_t> Settings::milliseconds(std::string_view name) const {
  const auto value = get(name);
  if (!value) return std::nullopt;
  // Canonical values are "0" or a number with one unit (canonical_milliseconds).
  size_t i = 0;
  while (i < value->size() && std::isdigit(static_cast<unsigned char>((*value)[i]))) ++i;
  if (i == 0) return std::nullopt;
  const uint64_t n = std::stoull(value->substr(0, i));
  const std::string unit = value->substr(i);
  if (unit.empty() || unit == "ms") return n;
  if (unit == "s") return n * 1000;
  if (unit == "min") return n * 60'000;
  if (unit == "h") return n * 3'600'000;
  if (unit == "d") return n * 86'400'000;
  return std::nullopt;
}

void Settings::initialize(std::string_view name, std::string_view value) {
  const SettingDefinition* def = find(name);
  std::string& slot = values_[def ? lower(def->name) : lower(name)];
  // Every COMMIT re-initializes transaction_isolation: not a change unless it is one.
  if (slot != value) ++generation_;
  slot = std::string(value);
  if (def && !def->read_only) return;
  // Read-only settings keep this value on RESET ALL too.
  for (auto& d : definitions_) {
    if (lower(d.name) == lower(name)) d.default_value = std::string(value);
  }
}

std::string Settings::canonical_name(std::string_view name) const {
  const SettingDefinition* def = find(name);
  return def ? def->name : lower(name);
}

std::vector<std::string> Settings::reset_all() {
  std::map<std::string, std::string> defaults = values_;
  for (const auto& def : definitions_) {
    if (!def.read_only) defaults[lower(def.name)] = def.default_value;
  }
  return restore(defaults);
}

std::vector<std::string> Settings::restore(const std::map<std::string, std::string>& saved) {
  if (values_ != saved) ++generation_;
  std::vector<std::string> changed;
  for (const auto& def : definitions_) {
    const std::string key = lower(def.name);
    auto it = saved.find(key);
    if (it != saved.end() && values_[key] != it->second && def.reported) changed.push_back(def.name);
  }
  values_ = saved;
  return changed;
}

std::vector<std::tuple<std::string, std::string, std::string>> Settings::all() const {
  std::vector<std::tuple<std::string, std::string, std::string>> rows;
  for (const auto& def : definitions_) rows.emplace_back(def.name, values_.at(lower(def.name)), def.description);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return lower(std::get<0>(a)) < lower(std::get<0>(b));
  });
  return rows;
}

std::vector<std::pair<std::string, std::string>> Settings::reported() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& def : definitions_) {
    if (def.reported) out.emplace_back(def.name, values_.at(lower(def.name)));
  }
  return out;
}

void Settings::apply_startup(const std::map<std::string, std::string>& parameters) {
  for (const auto& [name, value] : parameters) {
    if (name == "user" || name == "database" || name == "replication") continue;
    if (name == "options") {
      // "-c name=value" / "--name=value" pairs separated by spaces.
      std::string rest = value;
      size_t pos = 0;
      while ((pos = rest.find('=')) != std::string::npos) {
        size_t start = rest.rfind(' ', pos);
        std::string key = rest.substr(start == std::string::npos ? 0 : start + 1, pos - (start == std::string::npos ? 0 : start + 1));
        if (key.rfind("--", 0) == 0) key = key.substr(2);
        size_t end = rest.find(' ', pos);
        std::string v = rest.substr(pos + 1, end == std::string::npos ? std::string::npos : end - pos - 1);
        try { set(key, v); } catch (const Error&) {}
        if (end == std::string::npos) break;
        rest = rest.substr(end + 1);
      }
      continue;
    }
    const SettingDefinition* def = find(name);
    if (def == nullptr || def->read_only) continue;
    try { set(name, value); } catch (const Error&) {}  // PostgreSQL would FATAL; clients rarely send bad ones
  }
}

}  // namespace tally::executor
