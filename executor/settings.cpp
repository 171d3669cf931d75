#include "executor/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <tuple>

#include "common/ascii_case.hpp"
#include "common/error.hpp"
#include "executor/setting_units.hpp"
#include "executor/types/time_zone.hpp"

namespace tally::executor {
namespace {


using Kind = SettingDefinition::Kind;

std::string canonical_datestyle(std::string_view value) {
  std::string style, order;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    const std::string t = ascii_lower(token);
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

// enumvals as pg_settings has them: "{a,b,\"repeatable read\"}".
std::vector<std::string> parse_text_array(std::string_view text) {
  std::vector<std::string> out;
  std::string item;
  bool quoted = false;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') quoted = !quoted;
    else if (c == '\\' && i + 2 < text.size()) item.push_back(text[++i]);
    else if (c == ',' && !quoted) out.push_back(std::move(item)), item.clear();
    else item.push_back(c);
  }
  if (!item.empty() || !out.empty()) out.push_back(std::move(item));
  return out;
}

// PostgreSQL's messages for a setting a session cannot change, by its context.
Error read_only_error(const SettingDefinition& def) {
  const std::string context = def.postgres ? def.postgres->context : "internal";
  std::string why = "cannot be changed";
  if (context == "postmaster") why = "cannot be changed without restarting the server";
  else if (context == "sighup") why = "cannot be changed now";
  else if (context == "backend" || context == "superuser-backend") why = "cannot be set after connection start";
  return Error(SqlState::cant_change_runtime_param, "parameter \"" + def.name + "\" " + why);
}

}  // namespace

std::string_view server_version() { return "15.18 (Tally 0.1.0)"; }
std::string_view server_version_num() { return "150018"; }
std::string version_string() {
  return "PostgreSQL 15.18 (Tally 0.1.0) on x86_64-pc-linux-gnu, compiled by gcc, 64-bit";
}

Settings::Settings() = default;

std::string Settings::default_value(const SettingDefinition& def) const {
  auto it = defaults_.find(ascii_lower(def.name));
  return it == defaults_.end() ? def.default_value : it->second;
}

void Settings::store(const SettingDefinition& def, std::string value) {
  const std::string key = ascii_lower(def.name);
  if (value == def.default_value) values_.erase(key);
  else values_[key] = std::move(value);
}

std::optional<std::string> Settings::get(std::string_view name) const {
  const SettingDefinition* def = find_setting_definition(name);
  auto it = values_.find(def ? ascii_lower(def->name) : ascii_lower(name));
  if (it != values_.end()) return it->second;
  if (def) return def->default_value;
  return std::nullopt;
}

std::string Settings::canonical_value(const SettingDefinition& def, std::string_view value) const {
  const std::string v = ascii_lower(value);
  auto invalid = [&] {
    return Error(SqlState::invalid_parameter_value,
                 "invalid value for parameter \"" + def.name + "\": \"" + std::string(value) + "\"");
  };
  switch (def.kind) {
    case Kind::boolean: {
      auto prefix = [&](std::string_view word, size_t min) {
        return v.size() >= min && v.size() <= word.size() && word.substr(0, v.size()) == v;
      };
      if (prefix("true", 1) || prefix("yes", 1) || v == "on" || v == "1") return "on";
      if (prefix("false", 1) || prefix("no", 1) || prefix("off", 2) || v == "0") return "off";
      throw Error(SqlState::invalid_parameter_value, "parameter \"" + def.name + "\" requires a Boolean value");
    }
    case Kind::integer:
    case Kind::real: {
      bool bad_unit = false;
      const auto number = parse_with_unit(value, def.unit, &bad_unit);
      if (!number) {
        Error e = invalid();
        if (bad_unit && !def.unit.empty()) e.with_hint(unit_hint(def.unit));
        throw e;
      }
      const bool integer = def.kind == Kind::integer;
      const double n = integer ? std::rint(*number) : *number;
      if (def.postgres && def.postgres->min_val && def.postgres->max_val) {
        const double min = std::strtod(def.postgres->min_val, nullptr);
        const double max = std::strtod(def.postgres->max_val, nullptr);
        if (n < min || n > max) {
          const std::string unit = def.unit.empty() ? "" : " " + def.unit;
          const std::string shown = integer ? std::to_string(static_cast<long long>(n)) : format_real(n);
          throw Error(SqlState::invalid_parameter_value,
                      shown + unit + " is outside the valid range for parameter \"" + def.name + "\" (" +
                          def.postgres->min_val + " .. " + def.postgres->max_val + ")");
        }
      }
      return integer ? format_integer_with_unit(static_cast<long long>(n), def.unit)
                     : format_real_with_unit(n, def.unit);
    }
    case Kind::enumeration: {
      const std::vector<std::string> allowed = def.postgres ? parse_text_array(def.postgres->enumvals)
                                                            : std::vector<std::string>{};
      for (const auto& a : allowed) {
        if (ascii_lower(a) != v) continue;
        return a;
      }
      // PostgreSQL's hidden spellings of on and off in enums that have them.
      const bool has_on_off = std::find(allowed.begin(), allowed.end(), "on") != allowed.end() &&
                              std::find(allowed.begin(), allowed.end(), "off") != allowed.end();
      if (has_on_off && (v == "true" || v == "yes" || v == "1")) return "on";
      if (has_on_off && (v == "false" || v == "no" || v == "0")) return "off";
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw invalid().with_hint("Available values: " + list + ".");
    }
    case Kind::string: break;
  }
  if (def.name == "DateStyle") return canonical_datestyle(value);
  if (def.name == "client_encoding") {
    if (v == "utf8" || v == "utf-8" || v == "unicode") return "UTF8";
    throw Error(SqlState::feature_not_supported,
                "conversion between " + std::string(value) + " and UTF8 is not supported");
  }
  if (def.name == "TimeZone") {
    // PostgreSQL names a numeric zone as a POSIX one ('+02' shows as '<+02>-02').
    const auto zone = types::TimeZone::find(value);
    if (!zone) throw invalid();
    const bool numeric = !value.empty() && (std::isdigit(static_cast<unsigned char>(value[0])) ||
                                            value[0] == '+' || value[0] == '-' || value[0] == '.') &&
                         value.find(':') == std::string_view::npos;
    return numeric ? zone->name() : std::string(value);
  }
  if (def.name == "tally.engine") {
    if (v == "auto" || v == "cpu" || v == "gpu" || v == "generic") return v;
    throw invalid().with_hint("Available values: auto, cpu, gpu, generic.");
  }
  if (def.name == "tally.lookup_joins") {
    if (v == "auto" || v == "on" || v == "off") return v;
    throw invalid().with_hint("Available values: auto, on, off.");
  }
  return std::string(value);
}

std::pair<std::string, bool> Settings::set(std::string_view name, std::string_view value) {
  ++generation_;
  const SettingDefinition* def = find_setting_definition(name);
  if (def == nullptr) {
    // Custom "prefix.name" placeholders are accepted, as in PostgreSQL.
    if (name.find('.') != std::string_view::npos) {
      values_[ascii_lower(name)] = std::string(value);
      return {ascii_lower(name), false};
    }
    throw Error(SqlState::undefined_object, "unrecognized configuration parameter \"" + std::string(name) + "\"");
  }
  if (def->read_only) throw read_only_error(*def);
  store(*def, canonical_value(*def, value));
  return {def->name, def->reported};
}

std::pair<std::string, bool> Settings::reset(std::string_view name) {
  ++generation_;
  const SettingDefinition* def = find_setting_definition(name);
  if (def == nullptr) {
    if (name.find('.') != std::string_view::npos) {
      values_.erase(ascii_lower(name));
      return {ascii_lower(name), false};
    }
    throw Error(SqlState::undefined_object, "unrecognized configuration parameter \"" + std::string(name) + "\"");
  }
  if (def->read_only) throw read_only_error(*def);
  store(*def, default_value(*def));
  return {def->name, def->reported};
}

void Settings::set_default(std::string_view name, std::string_view value) {
  ++generation_;
  const SettingDefinition* def = find_setting_definition(name);
  if (!def) throw Error(SqlState::undefined_object, "unrecognized configuration parameter \"" + std::string(name) + "\"");
  std::string canonical = canonical_value(*def, value);
  defaults_[ascii_lower(def->name)] = canonical;
  store(*def, std::move(canonical));
}

std::optional<uint64_t> Settings::milliseconds(std::string_view name) const {
  const SettingDefinition* def = find_setting_definition(name);
  const auto value = get(name);
  if (!def || !value || def->unit != "ms") return std::nullopt;
  const auto ms = parse_with_unit(*value, "ms");
  if (!ms || *ms < 0) return std::nullopt;
  return static_cast<uint64_t>(std::llround(*ms));
}

void Settings::initialize(std::string_view name, std::string_view value) {
  const SettingDefinition* def = find_setting_definition(name);
  if (!def) {
    values_[ascii_lower(name)] = std::string(value);
    ++generation_;
    return;
  }
  // Every COMMIT re-initializes transaction_isolation: not a change unless it is one.
  if (get(def->name) != value) ++generation_;
  store(*def, std::string(value));
  // Read-only settings keep this value on RESET ALL too.
  if (def->read_only) defaults_[ascii_lower(def->name)] = std::string(value);
}

std::string Settings::canonical_name(std::string_view name) const {
  const SettingDefinition* def = find_setting_definition(name);
  return def ? def->name : ascii_lower(name);
}

std::vector<std::string> Settings::reset_all() {
  std::map<std::string, std::string> after;
  for (const auto& [key, value] : values_) {
    const SettingDefinition* def = find_setting_definition(key);
    // Custom placeholders, read-only settings and the transaction's own stay.
    if (!def || def->read_only || (def->postgres && def->postgres->no_reset_all)) after[key] = value;
  }
  for (const auto& [key, value] : defaults_) {
    const SettingDefinition* def = find_setting_definition(key);
    if (def->read_only || (def->postgres && def->postgres->no_reset_all)) continue;
    if (value != def->default_value) after[key] = value;
  }
  return restore(after);
}

std::vector<std::string> Settings::restore(const std::map<std::string, std::string>& saved) {
  if (values_ == saved) return {};
  ++generation_;
  std::vector<std::string> changed;
  auto check = [&](const std::string& key) {
    const SettingDefinition* def = find_setting_definition(key);
    if (!def || !def->reported) return;
    auto before = values_.find(key);
    auto after = saved.find(key);
    const std::string& b = before == values_.end() ? def->default_value : before->second;
    const std::string& a = after == saved.end() ? def->default_value : after->second;
    if (a != b && std::find(changed.begin(), changed.end(), def->name) == changed.end()) changed.push_back(def->name);
  };
  for (const auto& [key, value] : values_) check(key);
  for (const auto& [key, value] : saved) check(key);
  values_ = saved;
  return changed;
}

std::vector<std::tuple<std::string, std::string, std::string>> Settings::all() const {
  std::vector<std::tuple<std::string, std::string, std::string>> rows;
  for (const auto& def : setting_definitions()) {
    if (!def.hidden) rows.emplace_back(def.name, *get(def.name), def.description);
  }
  return rows;
}

std::vector<std::pair<std::string, std::string>> Settings::reported() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& def : setting_definitions()) {
    if (def.reported) out.emplace_back(def.name, *get(def.name));
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
    const SettingDefinition* def = find_setting_definition(name);
    if (def == nullptr || def->read_only) continue;
    try { set(name, value); } catch (const Error&) {}  // PostgreSQL would FATAL; clients rarely send bad ones
  }
}

}  // namespace tally::executor
