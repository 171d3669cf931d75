#include "executor/reg_names.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <string>

#include "common/error.hpp"

namespace tally::executor {
namespace {

// Shared by every session and read by any thread that encodes a result
// (the parallel row encoder's helpers included), hence atomic.
std::atomic<std::shared_ptr<const RegNames>>& installed() {
  static std::atomic<std::shared_ptr<const RegNames>> names;
  return names;
}

std::shared_ptr<const RegNames> current() { return installed().load(); }

// The last identifier of a possibly qualified name, as the reg* input
// functions read it: unquoted identifiers fold to lower case.
std::string last_identifier(std::string_view text) {
  std::string name;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        name += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        name += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '.') {
      name.clear();
    } else {
      name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return name;
}

Error missing(TypeId type, std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  switch (type) {
    case TypeId::regclass: return Error(SqlState::undefined_table, "relation " + quoted + " does not exist");
    case TypeId::regnamespace: return Error(SqlState::invalid_schema_name, "schema " + quoted + " does not exist");
    case TypeId::regproc:
    case TypeId::regprocedure: return Error(SqlState::undefined_function, "function " + quoted + " does not exist");
    case TypeId::regoper:
    case TypeId::regoperator: return Error(SqlState::undefined_function, "operator does not exist: " + std::string(text));
    default: break;
  }
  return Error(SqlState::undefined_object, "type " + quoted + " does not exist");
}

}  // namespace

void install_reg_names(std::shared_ptr<const RegNames> names) { installed().store(std::move(names)); }

std::string reg_output(TypeId type, int64_t oid) {
  // regoper and regoperator print OID 0 as a number (PostgreSQL's regoperout).
  if (oid == 0) return type == TypeId::regoper || type == TypeId::regoperator ? "0" : "-";
  if (const auto names = current()) {
    if (auto name = names->name_of(type, oid)) return *name;
  }
  // The types Tally has print as format_type names even with no catalog
  // installed (pg_typeof in a session without introspection).
  if (type == TypeId::regtype) {
    if (auto id = type_from_oid(static_cast<uint32_t>(oid))) return format_type(SqlType{*id});
  }
  return std::to_string(oid);
}

int64_t reg_input(TypeId type, std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  if (text == "-") return 0;
  if (!text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
    if (text.size() > 10 || std::stoll(std::string(text)) > 4294967295LL) {
      throw Error(SqlState::numeric_value_out_of_range,
                  "value \"" + std::string(text) + "\" is out of range for type oid");
    }
    return std::stoll(std::string(text));
  }
  if (const auto names = current()) {
    // regtype reads type names as SQL writes them ("integer", "character varying").
    // regprocedure reads a name with its argument types ("lower(text)"),
    // regoperator one with its operand types ("+(integer,integer)"): the
    // name folded as the others, the types as regtype reads them.
    const size_t open = text.find('(');
    const bool with_types = type == TypeId::regprocedure || type == TypeId::regoperator;
    const std::string name = type == TypeId::regtype ? std::string(text)
                             : with_types && open != std::string_view::npos
                                 ? last_identifier(text.substr(0, open)) + std::string(text.substr(open))
                                 : last_identifier(text);
    if (auto oid = names->oid_of(type, name)) return *oid;
    if (type == TypeId::regtype) {
      if (auto oid = names->oid_of(type, last_identifier(text))) return *oid;
    }
  }
  throw missing(type, text);
}

}  // namespace tally::executor
