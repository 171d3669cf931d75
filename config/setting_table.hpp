#pragma once
// The table of every setting: its TOML key, flag, environment variable, help
// and how to parse and print it. The loader, --help, --print-config and the
// example-file test all read this one table, so they cannot drift apart.
// Internal to config/.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace tally::config {

enum class SettingKind { string, boolean, integer, real, bytes, enumeration, string_list, users };

struct Setting {
  std::string key;         // TOML key, dotted for tables: "tuning.b_max"
  std::string flag;        // "--tuning-b-max"
  std::string env;         // "TALLY_TUNING_B_MAX"
  std::string value_name;  // shown in --help: N, BYTES, PATH, ...
  std::string help;
  SettingKind kind = SettingKind::string;
  bool secret = false;  // never printed back (the admin token)
  // Parses text from a flag, a variable or a converted TOML scalar into the
  // config. Throws std::invalid_argument with the reason on a bad value.
  std::function<void(Config&, std::string_view)> set_text;
  // string_list only: sets from a TOML array.
  std::function<void(Config&, const std::vector<std::string>&)> set_list;
  // The value as a TOML literal ("5432", "\"127.0.0.1\"", "[\"tally\"]").
  std::function<std::string(const Config&)> render;
};

const std::vector<Setting>& setting_table();
const Setting* find_setting_by_key(std::string_view key);
const Setting* find_setting_by_flag(std::string_view flag);
const Setting* find_setting_by_env(std::string_view env);

// Text parsers shared by the table and the loader; throw std::invalid_argument.
bool parse_bool_text(std::string_view text);
// Whether text is one of the spellings parse_bool_text accepts.
bool is_bool_text(std::string_view text);
int64_t parse_integer_text(std::string_view text);
uint64_t parse_bytes_text(std::string_view text);
double parse_real_text(std::string_view text);
AuthMethod parse_auth_method(std::string_view text);
std::string toml_string_literal(std::string_view text);
// Users given as "NAME:METHOD[:PASSWORD]" items separated by commas (flags and
// variables). The password is hashed here.
std::vector<UserConfig> parse_users_text(std::string_view text);
// Fills the hashes of a user from a password or a verifier given as password
// (as CREATE ROLE ... PASSWORD 'SCRAM-SHA-256$...' does).
void set_user_password(UserConfig& user, std::string_view password);

}  // namespace tally::config
