#include "executor/scalar/function_definition.hpp"

#include <cstdio>
#include <string_view>

#include "common/error.hpp"

namespace tally::executor::scalar {
namespace {

// A float as C's %g prints it (procost, prorows).
std::string g_format(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

// The name as quote_identifier writes it: regproc's text without the schema
// it adds when the name is overloaded.
std::string_view quoted_name(const PostgresFunction& f) {
  std::string_view name = f.regproc;
  constexpr std::string_view kSchema = "pg_catalog.";
  if (name.starts_with(kSchema)) name.remove_prefix(kSchema.size());
  return name;
}

const char* language_name(uint32_t language) {
  switch (language) {
    case 12: return "internal";
    case 13: return "c";
    default: return "sql";
  }
}

}  // namespace

std::string function_definition(const PostgresFunction& f) {
  if (f.kind == 'a') throw Error(SqlState::wrong_object_type, "\"" + std::string(f.name) + "\" is an aggregate function");
  std::string out = "CREATE OR REPLACE FUNCTION pg_catalog." + std::string(quoted_name(f)) + "(" + f.arguments + ")\n";
  out += " RETURNS " + std::string(f.result) + "\n";
  out += " LANGUAGE " + std::string(language_name(f.language)) + "\n";
  // The options on one line, each only where it differs from CREATE FUNCTION's default.
  std::string options;
  if (f.kind == 'w') options += " WINDOW";
  if (f.volatility == 'i') options += " IMMUTABLE";
  if (f.volatility == 's') options += " STABLE";
  if (f.parallel == 's') options += " PARALLEL SAFE";
  if (f.parallel == 'r') options += " PARALLEL RESTRICTED";
  if (f.strict) options += " STRICT";
  if (f.leakproof) options += " LEAKPROOF";
  const double default_cost = f.language == 12 || f.language == 13 ? 1 : 100;
  if (f.cost != default_cost) options += " COST " + g_format(f.cost);
  if (f.rows > 0 && f.rows != 1000) options += " ROWS " + g_format(f.rows);
  if (f.support_name != nullptr) options += " SUPPORT " + std::string(f.support_name);
  if (!options.empty()) out += options + "\n";
  if (f.language == 14 && f.sqlbody != nullptr) {
    out += f.sqlbody;
  } else {
    // Dollar quoting with a delimiter the body does not contain.
    const std::string source = f.source;
    std::string delimiter = "$function";
    while (source.find(delimiter) != std::string::npos) delimiter += 'x';
    delimiter += '$';
    out += "AS " + delimiter + source + delimiter;
  }
  return out + "\n";
}

}  // namespace tally::executor::scalar
