#include "executor/dml/copy_options.hpp"

#include <set>

namespace tally::executor::dml {
namespace {

Error option_error(SqlState state, std::string message, const StatementContext& ctx, int location) {
  return std::move(Error(state, std::move(message)).with_position(ctx.position(location)));
}

// The string argument of a DefElem (String or a bare word).
std::string string_arg(const nlohmann::json& def, const StatementContext& ctx) {
  const int location = def.value("location", -1);
  if (!def.contains("arg"))
    throw option_error(SqlState::syntax_error, def.value("defname", std::string()) + " requires a parameter", ctx,
                       location);
  const auto& arg = def["arg"];
  if (arg.contains("String")) return arg["String"].value("sval", std::string());
  if (arg.contains("Integer")) return std::to_string(arg["Integer"].value("ival", 0));
  throw option_error(SqlState::syntax_error, def.value("defname", std::string()) + " requires a parameter", ctx,
                     location);
}

// HEADER takes a boolean or MATCH (defGetCopyHeaderChoice).
void header_arg(const nlohmann::json& def, const StatementContext& ctx, CopyOptions& o) {
  if (!def.contains("arg")) {
    o.header = true;
    return;
  }
  const auto& arg = def["arg"];
  if (arg.contains("Boolean")) {
    o.header = arg["Boolean"].value("boolval", false);
    return;
  }
  if (arg.contains("Integer")) {
    const int v = arg["Integer"].value("ival", 0);
    if (v == 0 || v == 1) {
      o.header = v == 1;
      return;
    }
  }
  std::string s = arg.contains("String") ? arg["String"].value("sval", std::string()) : "";
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (s == "true" || s == "on") { o.header = true; return; }
  if (s == "false" || s == "off") { o.header = false; return; }
  if (s == "match") { o.header = o.header_match = true; return; }
  throw option_error(SqlState::syntax_error, def.value("defname", std::string()) + " requires a Boolean value or \"match\"",
                     ctx, def.value("location", -1));
}

// FORCE_NULL (a, b) / FORCE_QUOTE * : marks target positions.
void column_list_arg(const nlohmann::json& def, const StatementContext& ctx, const catalog::TableDef& def_table,
                     const std::vector<int>& targets, std::vector<bool>& flags, const char* option_name) {
  flags.assign(targets.size(), false);
  const int location = def.value("location", -1);
  if (!def.contains("arg")) throw option_error(SqlState::syntax_error, std::string(option_name) + " requires a parameter", ctx, location);
  const auto& arg = def["arg"];
  if (arg.contains("A_Star")) {
    flags.assign(targets.size(), true);
    return;
  }
  if (!arg.contains("List"))
    throw option_error(SqlState::syntax_error, std::string("argument to option \"") + def.value("defname", std::string()) +
                                                   "\" must be a list of column names",
                       ctx, location);
  for (const auto& item : arg["List"]["items"]) {
    const std::string name = item.at("String").value("sval", std::string());
    const int index = def_table.find_column(name);
    if (index < 0)
      throw Error(SqlState::undefined_column, "column \"" + name + "\" does not exist");
    bool found = false;
    for (size_t t = 0; t < targets.size(); ++t) {
      if (targets[t] == index) {
        flags[t] = true;
        found = true;
      }
    }
    if (!found)
      throw Error(SqlState::invalid_column_reference,
                  std::string(option_name) + " column \"" + name + "\" not referenced by COPY");
  }
}

char single_byte(const std::string& s, const char* what) {
  if (s.size() != 1)
    throw Error(SqlState::feature_not_supported, std::string("COPY ") + what + " must be a single one-byte character");
  return s[0];
}

}  // namespace

std::vector<int> copy_target_columns(const StatementContext&, const nlohmann::json& stmt, const catalog::TableDef& def) {
  std::vector<int> targets;
  if (!stmt.contains("attlist")) {
    for (size_t i = 0; i < def.columns.size(); ++i) targets.push_back(static_cast<int>(i));
    return targets;
  }
  std::set<int> seen;
  for (const auto& a : stmt["attlist"]) {
    const std::string name = a.at("String").value("sval", std::string());
    const int index = def.find_column(name);
    if (index < 0)
      throw Error(SqlState::undefined_column, "column \"" + name + "\" of relation \"" + def.name + "\" does not exist");
    if (!seen.insert(index).second)
      throw Error(SqlState::duplicate_column, "column \"" + name + "\" specified more than once");
    targets.push_back(index);
  }
  return targets;
}

CopyOptions parse_copy_options(const StatementContext& ctx, const nlohmann::json& stmt, const catalog::TableDef& def,
                               const std::vector<int>& targets, bool is_from) {
  CopyOptions o;
  std::set<std::string> seen;
  bool have_delimiter = false, have_null = false, have_quote = false, have_escape = false;
  bool have_force_null = false, have_force_not_null = false, have_force_quote = false;
  std::string delimiter, null_string, quote, escape;
  if (stmt.contains("options")) {
    for (const auto& opt : stmt["options"]) {
      const auto& d = opt.at("DefElem");
      const std::string name = d.value("defname", std::string());
      const int location = d.value("location", -1);
      if (!seen.insert(name).second)
        throw option_error(SqlState::syntax_error, "conflicting or redundant options", ctx, location);
      if (name == "format") {
        const std::string f = string_arg(d, ctx);
        if (f == "csv") o.csv = true;
        else if (f == "binary") o.binary = true;
        else if (f != "text")
          throw option_error(SqlState::invalid_parameter_value, "COPY format \"" + f + "\" not recognized", ctx, location);
      } else if (name == "header") {
        header_arg(d, ctx, o);
      } else if (name == "delimiter") {
        delimiter = string_arg(d, ctx);
        have_delimiter = true;
      } else if (name == "null") {
        null_string = string_arg(d, ctx);
        have_null = true;
      } else if (name == "quote") {
        quote = string_arg(d, ctx);
        have_quote = true;
      } else if (name == "escape") {
        escape = string_arg(d, ctx);
        have_escape = true;
      } else if (name == "force_null") {
        column_list_arg(d, ctx, def, targets, o.force_null, "FORCE_NULL");
        have_force_null = true;
      } else if (name == "force_not_null") {
        column_list_arg(d, ctx, def, targets, o.force_not_null, "FORCE_NOT_NULL");
        have_force_not_null = true;
      } else if (name == "force_quote") {
        column_list_arg(d, ctx, def, targets, o.force_quote, "FORCE_QUOTE");
        have_force_quote = true;
      } else if (name == "encoding") {
        std::string e = string_arg(d, ctx);
        for (auto& ch : e) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
        if (e != "UTF8" && e != "UTF-8" && e != "UNICODE" && e != "SQL_ASCII")
          throw option_error(SqlState::feature_not_supported, "COPY encoding \"" + string_arg(d, ctx) +
                                                                  "\" is not supported by Tally (only UTF8)",
                             ctx, location);
      } else if (name == "freeze") {
        // Rows are always visible at commit: FREEZE changes nothing.
      } else {
        throw option_error(SqlState::syntax_error, "option \"" + name + "\" not recognized", ctx, location);
      }
    }
  }
  if (o.binary && o.csv) throw Error(SqlState::syntax_error, "conflicting or redundant options");
  if (o.binary) {
    if (have_delimiter) throw Error(SqlState::syntax_error, "cannot specify DELIMITER in BINARY mode");
    if (have_null) throw Error(SqlState::syntax_error, "cannot specify NULL in BINARY mode");
    if (o.header) throw Error(SqlState::syntax_error, "cannot specify HEADER in BINARY mode");
    throw Error(SqlState::feature_not_supported, "COPY BINARY is not supported by Tally");
  }
  o.delimiter = have_delimiter ? single_byte(delimiter, "delimiter") : (o.csv ? ',' : '\t');
  o.null_string = have_null ? null_string : (o.csv ? "" : "\\N");
  if (o.csv) {
    o.quote = have_quote ? single_byte(quote, "quote") : '"';
    o.escape = have_escape ? single_byte(escape, "escape") : o.quote;
  } else {
    if (have_quote) throw Error(SqlState::feature_not_supported, "COPY quote available only in CSV mode");
    if (have_escape) throw Error(SqlState::feature_not_supported, "COPY escape available only in CSV mode");
  }
  if (o.delimiter == '\r' || o.delimiter == '\n')
    throw Error(SqlState::invalid_parameter_value, "COPY delimiter cannot be newline or carriage return");
  if (o.null_string.find_first_of("\r\n") != std::string::npos)
    throw Error(SqlState::invalid_parameter_value, "COPY null representation cannot use newline or carriage return");
  if (!o.csv && (o.delimiter == '\\' || (o.delimiter >= 'a' && o.delimiter <= 'z') ||
                 (o.delimiter >= '0' && o.delimiter <= '9') || o.delimiter == '.'))
    throw Error(SqlState::feature_not_supported, std::string("COPY delimiter cannot be \"") + o.delimiter + "\"");
  if (o.csv && o.delimiter == o.quote)
    throw Error(SqlState::invalid_parameter_value, "COPY delimiter and quote must be different");
  if (o.null_string.find(o.delimiter) != std::string::npos)
    throw Error(SqlState::invalid_parameter_value, "COPY delimiter must not appear in the NULL specification");
  if (o.csv && o.null_string.find(o.quote) != std::string::npos)
    throw Error(SqlState::invalid_parameter_value, "CSV quote character must not appear in the NULL specification");
  if (have_force_null) {
    if (!o.csv) throw Error(SqlState::feature_not_supported, "COPY force null available only in CSV mode");
    if (!is_from) throw Error(SqlState::feature_not_supported, "COPY force null only available using COPY FROM");
  }
  if (have_force_not_null) {
    if (!o.csv) throw Error(SqlState::feature_not_supported, "COPY force not null available only in CSV mode");
    if (!is_from) throw Error(SqlState::feature_not_supported, "COPY force not null only available using COPY FROM");
  }
  if (have_force_quote) {
    if (!o.csv) throw Error(SqlState::feature_not_supported, "COPY force quote available only in CSV mode");
    if (is_from) throw Error(SqlState::feature_not_supported, "COPY force quote only available using COPY TO");
  }
  if (o.header_match && !is_from)
    throw Error(SqlState::feature_not_supported, "cannot use \"match\" with HEADER in COPY TO");
  o.force_null.resize(targets.size(), false);
  o.force_not_null.resize(targets.size(), false);
  o.force_quote.resize(targets.size(), false);
  return o;
}

}  // namespace tally::executor::dml
