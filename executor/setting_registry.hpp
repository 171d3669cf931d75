#pragma once
// Every run-time setting a session has, built once per process: PostgreSQL
// 15's (postgres_settings.hpp, so SHOW ALL and pg_settings list what
// PostgreSQL's do) with Tally's values where Tally has the setting, and
// Tally's own (tally.*).
#include <span>
#include <string>
#include <string_view>

#include "executor/postgres_settings.hpp"

namespace tally::executor {

struct SettingDefinition {
  std::string name;           // canonical spelling ("DateStyle")
  std::string default_value;  // as SHOW prints it
  std::string description;
  bool reported = false;      // GUC_REPORT: a change is sent as ParameterStatus
  bool read_only = false;     // a session cannot SET it (PostgreSQL's contexts other than user/superuser)
  bool hidden = false;        // GUC_NO_SHOW_ALL: not in SHOW ALL nor pg_settings
  enum class Kind { string, boolean, integer, real, enumeration } kind = Kind::string;
  std::string unit;           // base unit: "" or pg_settings.unit
  const PostgresSetting* postgres = nullptr;  // PostgreSQL's metadata; nullptr for Tally's own
};

// Sorted by lower-case name (SHOW ALL's order).
std::span<const SettingDefinition> setting_definitions();
// By case-insensitive name; nullptr when unknown.
const SettingDefinition* find_setting_definition(std::string_view name);

}  // namespace tally::executor
