#pragma once
// The data set's command-line options, shared by h2o_datagen and h2o_bench.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "bench/h2o/groupby_data.hpp"

namespace tally::bench::h2o {

// 1e7, 10000000 or 1.5e6: db-benchmark names sizes in scientific notation.
inline uint64_t parse_count(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || v < 1 || v > 1e12) throw std::invalid_argument("bad count: " + text);
  return static_cast<uint64_t>(v + 0.5);
}

// Consumes `--name value` when it names a data option; false otherwise.
inline bool parse_data_option(const std::string& name, const std::string& value, GroupbyParams& p) {
  if (name == "--rows") {
    p.rows = parse_count(value);
  } else if (name == "--k") {
    p.k = parse_count(value);
  } else if (name == "--na") {
    p.na_percent = static_cast<unsigned>(std::stoul(value));
    if (p.na_percent > 100) throw std::invalid_argument("--na is a percentage");
  } else if (name == "--sort") {
    p.sorted = value == "1";
  } else if (name == "--seed") {
    p.seed = std::stoull(value);
  } else {
    return false;
  }
  return true;
}

}  // namespace tally::bench::h2o
