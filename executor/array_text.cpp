#include "executor/array_text.hpp"

#include <cctype>
#include <strings.h>

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
  return id == TypeId::text_array || id == TypeId::int2vector || id == TypeId::oidvector;
}

TypeId array_element_type(TypeId array_type) {
  if (array_type == TypeId::int2vector) return TypeId::int2;
  if (array_type == TypeId::oidvector) return TypeId::oid;
  return TypeId::text;
}

std::vector<std::optional<std::string>> array_elements(TypeId array_type, std::string_view text) {
  std::vector<std::optional<std::string>> out;
  if (array_type != TypeId::text_array) {
    size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && text[i] == ' ') ++i;
      const size_t start = i;
      while (i < text.size() && text[i] != ' ') ++i;
      if (i > start) out.emplace_back(std::string(text.substr(start, i - start)));
    }
    return out;
  }
  size_t i = 0;
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

std::string array_literal(const std::vector<std::optional<std::string>>& elements) {
  std::string out = "{";
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
