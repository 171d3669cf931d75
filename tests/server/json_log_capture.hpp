#pragma once
// Test fixture helper: while alive, every common/log.hpp line is captured as
// a parsed JSON object (format json, level info unless changed); on
// destruction the default sink, text format and info level come back. For the
// tests of what tallyd logs (tests/server, tests/admin's query log test).
//
//   testing_log::JsonLogCapture log;
//   ... code that logs ...
//   EXPECT_EQ(log.count("query_failed"), 1u);
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/log.hpp"

namespace tally::testing_log {

class JsonLogCapture {
 public:
  JsonLogCapture() {
    log::set_sink([this](std::string_view line) { lines_.push_back(nlohmann::json::parse(line)); });
    log::set_format(log::Format::json);
    log::set_level(log::Level::info);
  }
  ~JsonLogCapture() {
    log::set_sink(nullptr);
    log::set_format(log::Format::text);
    log::set_level(log::Level::info);
  }
  JsonLogCapture(const JsonLogCapture&) = delete;
  JsonLogCapture& operator=(const JsonLogCapture&) = delete;

  const std::vector<nlohmann::json>& lines() const { return lines_; }
  void clear() { lines_.clear(); }
  // The lines of one event ("query", "connection" ...), in order.
  std::vector<nlohmann::json> events(const std::string& name) const {
    std::vector<nlohmann::json> out;
    for (const auto& line : lines_)
      if (line.value("event", "") == name) out.push_back(line);
    return out;
  }
  size_t count(const std::string& name) const { return events(name).size(); }

 private:
  std::vector<nlohmann::json> lines_;
};

}  // namespace tally::testing_log
