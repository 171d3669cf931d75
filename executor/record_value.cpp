#include "executor/record_value.hpp"

#include <cctype>
#include <mutex>

#include "common/error.hpp"

namespace tally::executor {
namespace {

struct Shapes {
  std::mutex mutex;
  std::vector<std::vector<RecordField>> shapes;  // index = typmod
};

Shapes& shapes() {
  static Shapes* s = new Shapes;  // never destroyed: read until the process ends
  return *s;
}

bool needs_quotes(const std::string& field) {
  if (field.empty()) return true;
  for (unsigned char c : field) {
    if (c == '"' || c == '\\' || c == '(' || c == ')' || c == ',' || std::isspace(c)) return true;
  }
  return false;
}

Error malformed(std::string_view text) {
  return Error(SqlState::invalid_text_representation, "malformed record literal: \"" + std::string(text) + "\"");
}

}  // namespace

SqlType record_type(const std::vector<RecordField>& fields) {
  Shapes& s = shapes();
  std::lock_guard lock(s.mutex);
  for (size_t i = 0; i < s.shapes.size(); ++i) {
    if (s.shapes[i] == fields) return SqlType{TypeId::record, static_cast<int32_t>(i)};
  }
  s.shapes.push_back(fields);
  return SqlType{TypeId::record, static_cast<int32_t>(s.shapes.size() - 1)};
}

std::vector<RecordField> record_fields(SqlType type) {
  if (type.id != TypeId::record || type.typmod < 0) return {};
  Shapes& s = shapes();
  std::lock_guard lock(s.mutex);
  if (static_cast<size_t>(type.typmod) >= s.shapes.size()) return {};
  return s.shapes[static_cast<size_t>(type.typmod)];
}

std::string record_text(const std::vector<std::optional<std::string>>& fields) {
  std::string out = "(";
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    if (!fields[i]) continue;
    const std::string& f = *fields[i];
    if (!needs_quotes(f)) {
      out += f;
      continue;
    }
    out += '"';
    for (char c : f) {
      if (c == '"' || c == '\\') out += c;
      out += c;
    }
    out += '"';
  }
  out += ')';
  return out;
}

std::vector<std::optional<std::string>> record_field_texts(std::string_view text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') throw malformed(text);
  std::vector<std::optional<std::string>> fields;
  size_t i = 1;
  const size_t end = text.size() - 1;
  while (true) {
    std::optional<std::string> field;
    bool quoted = false;
    while (i < end && text[i] != ',') {
      if (text[i] == '"') {
        quoted = true;
        ++i;
        while (true) {
          if (i >= end) throw malformed(text);
          if (text[i] == '"' && i + 1 < end && text[i + 1] == '"') {
            (field ? *field : field.emplace()) += '"';
            i += 2;
          } else if (text[i] == '"') {
            ++i;
            break;
          } else {
            if (text[i] == '\\' && i + 1 < end) ++i;
            (field ? *field : field.emplace()) += text[i++];
          }
        }
      } else {
        if (text[i] == '\\' && i + 1 < end) ++i;
        (field ? *field : field.emplace()) += text[i++];
      }
    }
    if (quoted && !field) field.emplace();
    fields.push_back(std::move(field));
    if (i >= end) break;
    ++i;  // the comma
  }
  return fields;
}

}  // namespace tally::executor
