#include "executor/array_text.hpp"

#include <cctype>
#include <strings.h>

#include <string>
#include <utility>

#include "common/error.hpp"

namespace tally::executor {
namespace {

Error malformed(std::string_view text) {
  return Error(SqlState::invalid_text_representation, "malformed array literal: \"" + std::string(text) + "\"");
}

bool needs_quotes(const std::string& element) {
  if (element.empty() || strcasecmp(element.c_str(), "NULL") == 0) return true;
  for (unsigned char c : element) {
    if (c == '{' || c == '}' || c == ',' || c == '"' || c == '\\' || std::isspace(c)) return true;
  }
  return false;
}

}  // namespace

bool is_array_type(TypeId id) {
  return id == TypeId::text_array || id == TypeId::oid_array || id == TypeId::name_array || id == TypeId::int2_array ||
         id == TypeId::int2vector ||
         id == TypeId::oidvector;
}

TypeId array_element_type(TypeId array_type) {
  if (array_type == TypeId::int2vector || array_type == TypeId::int2_array) return TypeId::int2;
  if (array_type == TypeId::oidvector || array_type == TypeId::oid_array) return TypeId::oid;
  if (array_type == TypeId::name_array) return TypeId::name;
  return TypeId::text;
}

namespace {

// The "[lo:hi]=" a literal starts with (PostgreSQL's array_out writes it for
// a lower bound other than 1): the position after it, and lo; {0, 1} when
// there is none.
std::pair<size_t, int64_t> bounds_prefix(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i >= text.size() || text[i] != '[') return {0, 1};
  const size_t colon = text.find(':', i), close = text.find(']', i);
  if (colon == std::string_view::npos || close == std::string_view::npos || colon > close || close + 1 >= text.size() ||
      text[close + 1] != '=') {
    throw malformed(text);
  }
  try {
    const int64_t lo = std::stoll(std::string(text.substr(i + 1, colon - i - 1)));
    (void)std::stoll(std::string(text.substr(colon + 1, close - colon - 1)));
    return {close + 2, lo};
  } catch (const std::exception&) {
    throw malformed(text);
  }
}

}  // namespace

int64_t array_lower_bound(TypeId array_type, std::string_view text) {
  if (array_type == TypeId::int2vector || array_type == TypeId::oidvector) return 0;
  return bounds_prefix(text).second;
}

std::vector<std::optional<std::string>> array_elements(TypeId array_type, std::string_view text) {
  std::vector<std::optional<std::string>> out;
  if (array_type == TypeId::int2vector || array_type == TypeId::oidvector) {
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && text[i] == ' ') ++i;
      const size_t start = i;
      while (i < text.size() && text[i] != ' ') ++i;
      if (i > start) out.emplace_back(std::string(text.substr(start, i - start)));
    }
    return out;
  }
  size_t i = bounds_prefix(text).first;
  auto skip_space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_space();
  if (i >= text.size() || text[i] != '{') throw malformed(text);
  ++i;
  skip_space();
  if (i < text.size() && text[i] == '}') {
    ++i;
  } else {
    while (true) {
      skip_space();
      std::string element;
      bool quoted = false;
      if (i < text.size() && text[i] == '"') {
        quoted = true;
        for (++i; i < text.size() && text[i] != '"'; ++i) {
          if (text[i] == '\\' && i + 1 < text.size()) ++i;
          element += text[i];
        }
        if (i >= text.size()) throw malformed(text);
        ++i;
      } else {
        while (i < text.size() && text[i] != ',' && text[i] != '}') {
          if (text[i] == '{' || text[i] == '"') throw malformed(text);
          if (text[i] == '\\' && i + 1 < text.size()) ++i;
          element += text[i++];
        }
        while (!element.empty() && std::isspace(static_cast<unsigned char>(element.back()))) element.pop_back();
        if (element.empty()) throw malformed(text);
      }
      if (!quoted && strcasecmp(element.c_str(), "NULL") == 0) out.emplace_back(std::nullopt);
      else out.emplace_back(std::move(element));
      skip_space();
      if (i < text.size() && text[i] == ',') { ++i; continue; }
      if (i < text.size() && text[i] == '}') { ++i; break; }
      throw malformed(text);
    }
  }
  skip_space();
  if (i != text.size()) throw malformed(text);
  return out;
}

std::string array_literal(const std::vector<std::optional<std::string>>& elements, int64_t lower_bound) {
  std::string out;
  if (lower_bound != 1 && !elements.empty()) {
    out = "[" + std::to_string(lower_bound) + ":" +
          std::to_string(lower_bound + static_cast<int64_t>(elements.size()) - 1) + "]=";
  }
  out += "{";
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) out += ',';
    if (!elements[i]) { out += "NULL"; continue; }
    const std::string& e = *elements[i];
    if (!needs_quotes(e)) { out += e; continue; }
    out += '"';
    for (char c : e) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

}  // namespace tally::executor
