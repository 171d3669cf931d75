#pragma once
// ASCII case folding, as PostgreSQL folds setting names, option words and
// enum values (pg_strcasecmp's rule: only A-Z change, whatever the locale).
#include <string>
#include <string_view>

namespace tally {

inline std::string ascii_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace tally
