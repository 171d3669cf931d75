// Value helpers of the catalog query evaluator: type kinds, names, LIKE
// patterns, text[] literals and mixed int/float comparison.
#include <map>

#include "common/error.hpp"
#include "executor/introspection/query_compiler.hpp"
#include "executor/value_codec.hpp"

namespace tally::executor::introspection::detail {

void unsupported(const std::string& what) {
  throw Error(SqlState::feature_not_supported, "catalog queries do not support " + what);
}

bool int_kind(TypeId id) {
  switch (id) {
    case TypeId::int2:
    case TypeId::int4:
    case TypeId::int8:
    case TypeId::oid:
    case TypeId::regclass:
    case TypeId::regtype:
      return true;
    default:
      return false;
  }
}
bool text_kind(TypeId id) {
  return id == TypeId::text || id == TypeId::name || id == TypeId::varchar || id == TypeId::bpchar ||
         id == TypeId::char_ || id == TypeId::unknown;
}

std::string str_of(const json& node) {
  if (node.contains("String")) return node["String"].value("sval", "");
  unsupported("this name form");
}

std::string last_name(const json& names) { return str_of(names.back()); }

const json& unwrap_select(const json& node) { return node.contains("SelectStmt") ? node["SelectStmt"] : node; }

bool truthy(const Value& v) { return std::holds_alternative<bool>(v) && std::get<bool>(v); }

std::string like_to_regex(const std::string& pattern) {
  std::string out = "^";
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      out += '\\';
      out += pattern[++i];
    } else if (c == '%') {
      out += ".*";
    } else if (c == '_') {
      out += '.';
    } else if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out + "$";
}

// text[] values are held in PostgreSQL's text form ("{a,\"b c\"}"): what the
// catalogs store and what a client receives.
std::vector<std::string> array_elements(const std::string& text) {
  std::vector<std::string> out;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') {
    throw Error(SqlState::invalid_text_representation, "malformed array literal: \"" + text + "\"");
  }
  std::string current;
  bool quoted = false, any = false;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\' && i + 2 < text.size()) current += text[++i];
      else if (c == '"') quoted = false;
      else current += c;
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      out.push_back(current);
      current.clear();
      any = false;
    } else {
      current += c;
      any = true;
    }
  }
  if (any || !out.empty()) out.push_back(current);
  return out;
}

std::string array_text(const std::vector<std::string>& elements) {
  std::string out = "{";
  for (size_t i = 0; i < elements.size(); ++i) {
    const std::string& e = elements[i];
    const bool quote = e.empty() || e == "NULL" || e.find_first_of(",{}\" \\") != std::string::npos;
    if (i > 0) out += ',';
    if (!quote) {
      out += e;
      continue;
    }
    out += '"';
    for (char c : e) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

int compare_datums(const Value& a, const Value& b) {
  if (std::holds_alternative<int64_t>(a) && std::holds_alternative<double>(b)) {
    const double x = static_cast<double>(std::get<int64_t>(a));
    return x < std::get<double>(b) ? -1 : x > std::get<double>(b) ? 1 : 0;
  }
  if (std::holds_alternative<double>(a) && std::holds_alternative<int64_t>(b)) return -compare_datums(b, a);
  return compare_values(a, b);
}

SqlType type_from_name(const json& type_name) {
  if (type_name.contains("arrayBounds")) unsupported("array types");
  std::string name = last_name(type_name["names"]);
  static const std::map<std::string, TypeId> kNames{
      {"regclass", TypeId::regclass}, {"regtype", TypeId::regtype}, {"oid", TypeId::oid},
      {"text", TypeId::text},         {"name", TypeId::name},       {"int2", TypeId::int2},
      {"int4", TypeId::int4},         {"int8", TypeId::int8},       {"bool", TypeId::boolean},
      {"varchar", TypeId::varchar},   {"char", TypeId::char_},      {"bpchar", TypeId::bpchar},
      {"float8", TypeId::float8},     {"float4", TypeId::float4},   {"integer", TypeId::int4},
      {"smallint", TypeId::int2},     {"bigint", TypeId::int8},     {"boolean", TypeId::boolean}};
  auto it = kNames.find(name);
  if (it == kNames.end()) unsupported("a cast to " + name);
  return SqlType{it->second};
}

}  // namespace tally::executor::introspection::detail
