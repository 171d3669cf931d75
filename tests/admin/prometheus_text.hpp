#pragma once
// A strict reader of the Prometheus text format for tests: every sample line
// must be `name{labels} value`, every family must have HELP and TYPE first.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>

namespace tally::testing_prom {

// "series{labels}" -> value. Fails the test on a malformed line.
inline std::map<std::string, double> parse_exposition(const std::string& text) {
  std::map<std::string, double> out;
  std::set<std::string> typed;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) continue;
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram") << line;
      typed.insert(name);
      continue;
    }
    size_t space = line.rfind(' ');
    EXPECT_NE(space, std::string::npos) << line;
    if (space == std::string::npos) continue;
    std::string series = line.substr(0, space), value = line.substr(space + 1);
    std::string name = series.substr(0, series.find('{'));
    bool known = typed.count(name) > 0;
    for (const char* suffix : {"_bucket", "_sum", "_count"})
      if (name.size() > strlen(suffix) && name.ends_with(suffix))
        known = known || typed.count(name.substr(0, name.size() - strlen(suffix))) > 0;
    EXPECT_TRUE(known) << "sample without # TYPE: " << line;
    char* end = nullptr;
    double v = value == "+Inf" ? INFINITY : value == "-Inf" ? -INFINITY : std::strtod(value.c_str(), &end);
    if (value != "+Inf" && value != "-Inf") {
      EXPECT_TRUE(end && *end == '\0') << line;
    }
    EXPECT_EQ(out.count(series), 0u) << "duplicate series " << series;
    out[series] = v;
  }
  return out;
}

}  // namespace tally::testing_prom
