#include "executor/setting_registry.hpp"

#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <vector>

#include "common/ascii_case.hpp"
#include "executor/settings.hpp"

namespace tally::executor {
namespace {


using Kind = SettingDefinition::Kind;

// PostgreSQL 15's GUC_REPORT settings: a change is sent as ParameterStatus.
constexpr std::string_view kReported[] = {
    "application_name", "client_encoding",  "DateStyle",      "default_transaction_read_only",
    "in_hot_standby",   "integer_datetimes", "IntervalStyle", "is_superuser",
    "server_encoding",  "server_version",   "session_authorization", "standard_conforming_strings",
    "TimeZone"};

// Where Tally's value is not the one a fresh PostgreSQL shows: what its
// storage and sessions are (UTF8 in the C locale, UTC) and its version. The
// server's configuration adds its own at start-up (server_settings.cpp).
// jit keeps PostgreSQL's meaning and default: on, the GPU engine compiles
// the column programs it runs (gpu/pipeline/program_compiler.hpp).
struct TallyValue {
  std::string_view name;
  std::string_view value;
};
constexpr TallyValue kTallyValues[] = {
    {"client_encoding", "UTF8"}, {"server_encoding", "UTF8"}, {"lc_collate", "C"}, {"lc_ctype", "C"},
    {"lc_messages", "C"},        {"lc_monetary", "C"},        {"lc_numeric", "C"}, {"lc_time", "C"},
    {"TimeZone", "UTC"},         {"log_timezone", "UTC"},     {"max_parallel_workers_per_gather", "2"}};

Kind kind_of(std::string_view vartype) {
  if (vartype == "bool") return Kind::boolean;
  if (vartype == "integer") return Kind::integer;
  if (vartype == "real") return Kind::real;
  if (vartype == "enum") return Kind::enumeration;
  return Kind::string;
}

struct Registry {
  std::vector<SettingDefinition> definitions;
  std::unordered_map<std::string, size_t> by_name;  // lower-case name -> index
};

Registry build() {
  Registry r;
  for (const PostgresSetting& pg : postgres_settings()) {
    SettingDefinition def;
    def.name = pg.name;
    def.default_value = pg.shown;
    def.description = pg.short_desc;
    const std::string_view context = pg.context;
    def.read_only = context != "user" && context != "superuser";
    def.kind = kind_of(pg.vartype);
    def.unit = pg.unit ? pg.unit : "";
    def.postgres = &pg;
    r.definitions.push_back(std::move(def));
  }
  auto find = [&](std::string_view name) -> SettingDefinition* {
    for (auto& d : r.definitions) {
      if (d.name == name) return &d;
    }
    return nullptr;
  };
  for (const auto& [name, value] : kTallyValues) find(name)->default_value = value;
  find("server_version")->default_value = server_version();
  find("server_version_num")->default_value = server_version_num();
  // Tally's own, and PostgreSQL's that SHOW answers but SHOW ALL leaves out.
  auto add = [&](std::string name, std::string value, std::string description, bool hidden, bool read_only) {
    SettingDefinition def;
    def.name = std::move(name);
    def.default_value = std::move(value);
    def.description = std::move(description);
    def.hidden = hidden;
    def.read_only = read_only;
    if (def.default_value == "on" || def.default_value == "off") def.kind = Kind::boolean;
    r.definitions.push_back(std::move(def));
  };
  add("is_superuser", "on", "Shows whether the current user is a superuser.", true, true);
  add("session_authorization", "", "Sets the session user name.", true, true);
  add("tally.engine", "auto", "Aggregation engine: auto, cpu, gpu or generic (the reference path).", false, false);
  add("tally.lookup_joins", "auto",
      "Star joins feeding an aggregate run as lookups by key: auto (where a GPU takes the aggregate), on or off.",
      false, false);
  add("tally.variant", "",
      "GPU aggregation variant to force (dense, shared_memory, global, sort, partitioned); empty: the tuner's choice.",
      false, false);
  add("tally.launch_config", "",
      "GPU launch configuration to force, e.g. tpb=256,bps=4,ff=50,rpt=4; empty: the tuner's choice.", false, false);
  for (std::string_view name : kReported) find(name)->reported = true;
  std::sort(r.definitions.begin(), r.definitions.end(),
            [](const auto& a, const auto& b) { return ascii_lower(a.name) < ascii_lower(b.name); });
  for (size_t i = 0; i < r.definitions.size(); ++i) r.by_name.emplace(ascii_lower(r.definitions[i].name), i);
  return r;
}

const Registry& registry() {
  static const Registry r = build();
  return r;
}

}  // namespace

std::span<const SettingDefinition> setting_definitions() { return registry().definitions; }

const SettingDefinition* find_setting_definition(std::string_view name) {
  const Registry& r = registry();
  auto it = r.by_name.find(ascii_lower(name));
  return it == r.by_name.end() ? nullptr : &r.definitions[it->second];
}

}  // namespace tally::executor
