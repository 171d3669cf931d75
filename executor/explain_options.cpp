#include "executor/explain_options.hpp"

#include <cctype>

#include "common/error.hpp"
#include "common/sql_type.hpp"
#include "executor/command_result.hpp"
#include "executor/result_set.hpp"

namespace tally::executor {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// An option's argument as text: a word (FORMAT JSON), a string or a number.
std::string argument(const nlohmann::json& option) {
  if (!option.contains("arg")) return "";
  const nlohmann::json& arg = option["arg"];
  if (arg.contains("String")) return arg["String"].value("sval", "");
  return constant_text(arg);
}

bool boolean_option(const nlohmann::json& option, const std::string& name) {
  if (!option.contains("arg")) return true;
  const std::string v = lower(argument(option));
  if (v == "true" || v == "on" || v == "1" || v == "yes") return true;
  if (v == "false" || v == "off" || v == "0" || v == "no") return false;
  throw Error(SqlState::invalid_parameter_value, name + " requires a Boolean value");
}

}  // namespace

ExplainOptions explain_options(const nlohmann::json& options) {
  ExplainOptions out;
  for (const auto& item : options) {
    const nlohmann::json& option = item["DefElem"];
    const std::string name = option.value("defname", "");
    if (name == "analyze") out.analyze = boolean_option(option, name);
    else if (name == "costs") out.costs = boolean_option(option, name);
    else if (name == "format") {
      const std::string format = lower(argument(option));
      if (format == "text") out.format = ExplainFormat::text;
      else if (format == "json") out.format = ExplainFormat::json;
      else if (format == "yaml") out.format = ExplainFormat::yaml;
      else if (format == "xml") out.format = ExplainFormat::xml;
      else {
        throw Error(SqlState::invalid_parameter_value,
                    "unrecognized value for EXPLAIN option \"format\": \"" + format + "\"");
      }
    }
    else if (name == "verbose" || name == "buffers" || name == "settings" || name == "wal" || name == "timing" ||
             name == "summary") {
      // They add what Tally does not measure: the plan is the same without them.
      boolean_option(option, name);
    } else {
      throw Error(SqlState::syntax_error, "unrecognized EXPLAIN option \"" + name + "\"");
    }
  }
  return out;
}

tally::FieldDescription explain_field(const ExplainOptions& options) {
  tally::FieldDescription field = describe_column("QUERY PLAN", {TypeId::text});
  if (options.format == ExplainFormat::json) field.type_oid = oid::json;
  if (options.format == ExplainFormat::xml) field.type_oid = oid::xml;
  return field;
}

}  // namespace tally::executor
