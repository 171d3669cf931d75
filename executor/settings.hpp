#pragma once
// Run-time settings of one session (PostgreSQL's GUCs): SET, SHOW, RESET,
// current_setting(), and the ParameterStatus reports PostgreSQL sends for the
// GUC_REPORT settings when they change.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "executor/setting_registry.hpp"

namespace tally::executor {

class Settings {
 public:
  Settings();

  // Value by case-insensitive name; nullopt when unknown.
  std::optional<std::string> get(std::string_view name) const;
  // Sets a value (canonicalized as PostgreSQL shows it). Returns the canonical
  // name and whether it is reported. Throws 42704 for an unknown parameter,
  // 22023 for a bad value, 55P02-ish (0A000 here) for read-only ones.
  std::pair<std::string, bool> set(std::string_view name, std::string_view value);
  // Back to the default (RESET / SET ... TO DEFAULT). Same return as set().
  std::pair<std::string, bool> reset(std::string_view name);
  // RESET ALL: the names of reported settings whose value changed.
  std::vector<std::string> reset_all();
  // Sets a value without the read-only check (session_authorization at start-up,
  // transaction_isolation at transaction end).
  void initialize(std::string_view name, std::string_view value);
  // Makes `value` this session's default (what RESET returns to): the server's
  // configured value of a setting such as statement_timeout.
  void set_default(std::string_view name, std::string_view value);
  // A millisecond-valued setting (statement_timeout, ...) in milliseconds;
  // nullopt when unknown.
  std::optional<uint64_t> milliseconds(std::string_view name) const;
  // The canonical spelling of a setting name ("datestyle" -> "DateStyle").
  std::string canonical_name(std::string_view name) const;
  // What RESET returns to: the server's configured value or the registry's.
  std::string default_value(const SettingDefinition& def) const;
  // Every setting for SHOW ALL: (name, value, description), sorted by name.
  std::vector<std::tuple<std::string, std::string, std::string>> all() const;
  // The initial ParameterStatus set.
  std::vector<std::pair<std::string, std::string>> reported() const;
  // Applies startup-packet parameters (application_name, client_encoding, options...).
  void apply_startup(const std::map<std::string, std::string>& parameters);

  // Snapshot/restore around transaction blocks (a rolled-back SET is undone).
  // The values that differ from the registry's defaults, by lower-case name:
  // small, and equal for two sessions whose settings are equal.
  std::map<std::string, std::string> snapshot() const { return values_; }
  // Restores; returns reported settings whose value changed.
  std::vector<std::string> restore(const std::map<std::string, std::string>& saved);
  // Changes with every call that may change a value (set, reset, restore ...):
  // what was derived from the settings at one generation holds until the next.
  uint64_t generation() const { return generation_; }

 private:
  std::string canonical_value(const SettingDefinition& def, std::string_view value) const;
  // Stores a setting's current value (dropped when it is the registry's default).
  void store(const SettingDefinition& def, std::string value);

  std::map<std::string, std::string> values_;    // by lower-case name: those not at the registry's default
  std::map<std::string, std::string> defaults_;  // by lower-case name: this session's own defaults
  uint64_t generation_ = 0;
};

// The version string of version() and server_version.
std::string_view server_version();
std::string_view server_version_num();
std::string version_string();

}  // namespace tally::executor
