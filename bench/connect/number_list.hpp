// A command-line list of unsigned numbers ("4096,65536"), as the connect
// benches take their group counts.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace tally::bench {

inline std::vector<uint64_t> parse_number_list(const char* text) {
  std::vector<uint64_t> out;
  for (const char* p = text; *p;) {
    out.push_back(std::strtoull(p, nullptr, 10));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

}  // namespace tally::bench
