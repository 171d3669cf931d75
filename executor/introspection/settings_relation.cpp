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

constexpr std::array<SettingMeta, 35> kMeta{{
    {"application_name", "", "Reporting and Logging / What to Log", "user", "string", "", "", ""},
    {"bytea_output", "", kStatement, "user", "enum", "", "", "{escape,hex}"},
    {"client_encoding", "", kLocale, "user", "string", "", "", ""},
    {"client_min_messages", "", kStatement, "user", "enum", "", "",
     "{debug5,debug4,debug3,debug2,debug1,log,notice,warning,error}"},
    {"DateStyle", "", kLocale, "user", "string", "", "", ""},
    {"default_transaction_isolation", "", kStatement, "user", "enum", "", "", kIsolation},
    {"default_transaction_read_only", "", kStatement, "user", "bool", "", "", ""},
    {"escape_string_warning", "", kCompat, "user", "bool", "", "", ""},
    {"extra_float_digits", "", kLocale, "user", "integer", "-15", "3", ""},
    {"idle_in_transaction_session_timeout", "ms", kStatement, "user", "integer", "0", "2147483647", ""},
    {"in_hot_standby", "", kPreset, "internal", "bool", "", "", ""},
    {"integer_datetimes", "", kPreset, "internal", "bool", "", "", ""},
    {"IntervalStyle", "", kLocale, "user", "enum", "", "", "{postgres,postgres_verbose,sql_standard,iso_8601}"},
    {"jit", "", "Query Tuning / Other Planner Options", "user", "bool", "", "", ""},
    {"lc_collate", "", kPreset, "internal", "string", "", "", ""},
    {"lc_ctype", "", kPreset, "internal", "string", "", "", ""},
    {"lc_messages", "", kLocale, "superuser", "string", "", "", ""},
    {"lc_monetary", "", kLocale, "user", "string", "", "", ""},
    {"lc_numeric", "", kLocale, "user", "string", "", "", ""},
    {"lc_time", "", kLocale, "user", "string", "", "", ""},
    {"lock_timeout", "ms", kStatement, "user", "integer", "0", "2147483647", ""},
    {"max_identifier_length", "", kPreset, "internal", "integer", "63", "63", ""},
    {"max_parallel_workers_per_gather", "", "Resource Usage / Asynchronous Behavior", "user", "integer", "0", "1024", ""},
    {"row_security", "", kStatement, "user", "bool", "", "", ""},
    {"search_path", "", kStatement, "user", "string", "", "", ""},
    {"server_encoding", "", kPreset, "internal", "string", "", "", ""},
    {"server_version", "", kPreset, "internal", "string", "", "", ""},
    {"server_version_num", "", kPreset, "internal", "integer", "", "", ""},
    {"standard_conforming_strings", "", kCompat, "user", "bool", "", "", ""},
    {"statement_timeout", "ms", kStatement, "user", "integer", "0", "2147483647", ""},
    {"synchronous_commit", "", "Write-Ahead Log / Settings", "user", "enum", "", "",
     "{local,remote_write,remote_apply,on,off}"},
    {"TimeZone", "", kLocale, "user", "string", "", "", ""},
    {"transaction_isolation", "", kStatement, "user", "enum", "", "", kIsolation},
    {"transaction_read_only", "", kStatement, "user", "bool", "", "", ""},
    {"work_mem", "kB", "Resource Usage / Memory", "user", "integer", "64", "2147483647", ""},
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
