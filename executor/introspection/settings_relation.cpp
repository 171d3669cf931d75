#include "executor/introspection/settings_relation.hpp"

#include <array>
#include <cctype>

namespace tally::executor::introspection {
namespace {

// PostgreSQL 15's pg_settings metadata for the parameters Tally's sessions
// have (executor/settings.cpp); unit "" = none, min/max "" = NULL.
struct SettingMeta {
  const char* name;
  const char* unit;
  const char* category;
  const char* context;
  const char* vartype;
  const char* min_val;
  const char* max_val;
  const char* enumvals;
};

constexpr const char* kStatement = "Client Connection Defaults / Statement Behavior";
constexpr const char* kLocale = "Client Connection Defaults / Locale and Formatting";
constexpr const char* kPreset = "Preset Options";
constexpr const char* kCompat = "Version and Platform Compatibility / Previous PostgreSQL Versions";
constexpr const char* kIsolation = "{serializable,\"repeatable read\",\"read committed\",\"read uncommitted\"}";

// The shapes pg_settings rows come in: settings a user may SET (strings,
// booleans, enums, integers with a unit and range), and read-only presets.
constexpr SettingMeta user_setting(const char* name, const char* category, const char* vartype) {
  return {name, "", category, "user", vartype, "", "", ""};
}
constexpr SettingMeta user_enum(const char* name, const char* category, const char* enumvals) {
  return {name, "", category, "user", "enum", "", "", enumvals};
}
constexpr SettingMeta user_integer(const char* name, const char* unit, const char* category, const char* min_val,
                                   const char* max_val) {
  return {name, unit, category, "user", "integer", min_val, max_val, ""};
}
constexpr SettingMeta preset(const char* name, const char* vartype) {
  return {name, "", kPreset, "internal", vartype, "", "", ""};
}

constexpr std::array<SettingMeta, 35> kMeta{{
    user_setting("application_name", "Reporting and Logging / What to Log", "string"),
    user_enum("bytea_output", kStatement, "{escape,hex}"),
    user_setting("client_encoding", kLocale, "string"),
    user_enum("client_min_messages", kStatement, "{debug5,debug4,debug3,debug2,debug1,log,notice,warning,error}"),
    user_setting("DateStyle", kLocale, "string"),
    user_enum("default_transaction_isolation", kStatement, kIsolation),
    user_setting("default_transaction_read_only", kStatement, "bool"),
    user_setting("escape_string_warning", kCompat, "bool"),
    user_integer("extra_float_digits", "", kLocale, "-15", "3"),
    user_integer("idle_in_transaction_session_timeout", "ms", kStatement, "0", "2147483647"),
    preset("in_hot_standby", "bool"),
    preset("integer_datetimes", "bool"),
    user_enum("IntervalStyle", kLocale, "{postgres,postgres_verbose,sql_standard,iso_8601}"),
    user_setting("jit", "Query Tuning / Other Planner Options", "bool"),
    preset("lc_collate", "string"),
    preset("lc_ctype", "string"),
    {"lc_messages", "", kLocale, "superuser", "string", "", "", ""},
    user_setting("lc_monetary", kLocale, "string"),
    user_setting("lc_numeric", kLocale, "string"),
    user_setting("lc_time", kLocale, "string"),
    user_integer("lock_timeout", "ms", kStatement, "0", "2147483647"),
    {"max_identifier_length", "", kPreset, "internal", "integer", "63", "63", ""},
    user_integer("max_parallel_workers_per_gather", "", "Resource Usage / Asynchronous Behavior", "0", "1024"),
    user_setting("row_security", kStatement, "bool"),
    user_setting("search_path", kStatement, "string"),
    preset("server_encoding", "string"),
    preset("server_version", "string"),
    preset("server_version_num", "integer"),
    user_setting("standard_conforming_strings", kCompat, "bool"),
    user_integer("statement_timeout", "ms", kStatement, "0", "2147483647"),
    user_enum("synchronous_commit", "Write-Ahead Log / Settings", "{local,remote_write,remote_apply,on,off}"),
    user_setting("TimeZone", kLocale, "string"),
    user_enum("transaction_isolation", kStatement, kIsolation),
    user_setting("transaction_read_only", kStatement, "bool"),
    user_integer("work_mem", "kB", "Resource Usage / Memory", "64", "2147483647"),
}};

// Not in PostgreSQL's pg_settings (GUC_NO_SHOW_ALL there).
bool hidden(const std::string& name) { return name == "is_superuser" || name == "session_authorization"; }

const SettingMeta* find_meta(const std::string& name) {
  for (const auto& m : kMeta) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

// A SHOW value ("5s", "4MB", "0") in the setting's base unit ("5000", "4096").
std::string in_base_unit(const std::string& shown, std::string_view unit) {
  if (unit.empty()) return shown;
  size_t i = 0;
  while (i < shown.size() && (std::isdigit(static_cast<unsigned char>(shown[i])) || (i == 0 && shown[i] == '-'))) ++i;
  if (i == 0) return shown;
  const long long n = std::stoll(shown.substr(0, i));
  const std::string suffix = shown.substr(i);
  long long factor = 1;
  if (unit == "ms") {
    if (suffix == "s") factor = 1000;
    else if (suffix == "min") factor = 60'000;
    else if (suffix == "h") factor = 3'600'000;
    else if (suffix == "d") factor = 86'400'000;
  } else if (unit == "kB") {
    if (suffix == "MB") factor = 1024;
    else if (suffix == "GB") factor = 1024 * 1024;
    else if (suffix == "TB") factor = 1024LL * 1024 * 1024;
  }
  return std::to_string(n * factor);
}

Value text_or_null(const char* s) { return *s ? Value{std::string(s)} : Value{Null{}}; }

}  // namespace

Relation pg_settings_relation(const CatalogSource& source) {
  Relation r;
  const TypeId text = TypeId::text;
  for (const char* name : {"name", "setting", "unit", "category", "short_desc", "extra_desc", "context", "vartype",
                           "source", "min_val", "max_val", "enumvals", "boot_val", "reset_val", "sourcefile",
                           "sourceline", "pending_restart"}) {
    const std::string n = name;
    const TypeId id = n == "enumvals" ? TypeId::text_array : n == "sourceline" ? TypeId::int4
                      : n == "pending_restart" ? TypeId::boolean : text;
    r.columns.push_back({n, SqlType{id}});
  }
  for (const auto& s : source.settings) {
    if (hidden(s.name)) continue;
    const SettingMeta* meta = find_meta(s.name);
    const std::string unit = meta ? meta->unit : "";
    const std::string setting = in_base_unit(s.value, unit);
    const std::string boot = in_base_unit(s.default_value, unit);
    r.rows.push_back({Value{s.name}, Value{setting}, text_or_null(unit.c_str()),
                      Value{std::string(meta ? meta->category : "Customized Options")}, Value{s.description},
                      Value{Null{}}, Value{std::string(meta ? meta->context : "user")},
                      Value{std::string(meta ? meta->vartype : "string")},
                      Value{std::string(setting == boot ? "default" : "session")},
                      meta ? text_or_null(meta->min_val) : Value{Null{}}, meta ? text_or_null(meta->max_val) : Value{Null{}},
                      meta ? text_or_null(meta->enumvals) : Value{Null{}}, Value{boot}, Value{boot}, Value{Null{}},
                      Value{Null{}}, Value{false}});
  }
  return r;
}

}  // namespace tally::executor::introspection
