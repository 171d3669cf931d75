#pragma once
// A string as a JSON string literal (RFC 8259): quotes, backslashes and
// control bytes escaped, DEL too (so a log line stays printable). The JSON
// log format and EXPLAIN's JSON and YAML documents write their strings so.
#include <cstdio>
#include <string>
#include <string_view>

namespace tally {

inline void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (const unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

}  // namespace tally
