// The structured logger: both formats, quoting, level filtering at run time,
// and whole lines under concurrent writers.
#include "common/log.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

namespace tally::log {
namespace {

class CapturedLog : public ::testing::Test {
 protected:
  void SetUp() override {
    set_sink([this](std::string_view line) { lines_.emplace_back(line); });
    set_level(Level::info);
    set_format(Format::text);
  }
  void TearDown() override {
    set_sink(nullptr);
    set_level(Level::info);
    set_format(Format::text);
  }
  std::vector<std::string> lines_;  // the sink runs under the logger's lock
};

TEST_F(CapturedLog, TextLinesAreKeyValue) {
  info("query_done", {{"user", "alice"}, {"rows", 42}, {"duration_ms", 1.5}, {"gpu", false},
                      {"sql", "SELECT \"a\" = 1"}, {"big", uint64_t(1) << 63}});
  ASSERT_EQ(lines_.size(), 1u);
  const std::string& l = lines_[0];
  EXPECT_TRUE(std::regex_search(l, std::regex(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=info event=query_done )")))
      << l;
  EXPECT_NE(l.find(" user=alice rows=42 duration_ms=1.5 gpu=false "), std::string::npos) << l;
  EXPECT_NE(l.find(R"(sql="SELECT \"a\" = 1")"), std::string::npos) << l;
  EXPECT_NE(l.find("big=9223372036854775808"), std::string::npos) << l;
  EXPECT_EQ(l.back(), '\n');
  EXPECT_EQ(std::count(l.begin(), l.end(), '\n'), 1);
}

TEST_F(CapturedLog, NewlinesNeverSplitALine) {
  warning("odd", {{"text", "two\nlines"}, {"empty", ""}});
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(std::count(lines_[0].begin(), lines_[0].end(), '\n'), 1) << lines_[0];
  EXPECT_NE(lines_[0].find(R"(text="two\nlines" empty="")"), std::string::npos) << lines_[0];
}

TEST_F(CapturedLog, JsonLinesParse) {
  set_format(Format::json);
  error("query_failed", {{"sqlstate", "22012"}, {"rows", -3}, {"ratio", 0.25}, {"ok", true},
                         {"msg", "quote \" backslash \\ tab \t ctl \x01"}});
  ASSERT_EQ(lines_.size(), 1u);
  auto j = nlohmann::json::parse(lines_[0]);
  EXPECT_EQ(j["level"], "error");
  EXPECT_EQ(j["event"], "query_failed");
  EXPECT_EQ(j["sqlstate"], "22012");
  EXPECT_EQ(j["rows"], -3);
  EXPECT_DOUBLE_EQ(j["ratio"].get<double>(), 0.25);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["msg"], "quote \" backslash \\ tab \t ctl \x01");
  EXPECT_TRUE(j.contains("ts"));
}

TEST_F(CapturedLog, LevelFilterChangesAtRunTime) {
  debug("hidden");
  info("shown");
  set_level(Level::warning);
  info("hidden_too");
  warning("shown_too");
  set_level(Level::debug);
  debug("shown_debug");
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_NE(lines_[0].find("event=shown\n"), std::string::npos) << lines_[0];
  EXPECT_NE(lines_[1].find("event=shown_too"), std::string::npos);
  EXPECT_NE(lines_[2].find("level=debug event=shown_debug"), std::string::npos);
  Level parsed;
  EXPECT_TRUE(parse_level("WARNING", parsed));
  EXPECT_EQ(parsed, Level::warning);
  EXPECT_FALSE(parse_level("verbose", parsed));
}

TEST_F(CapturedLog, ConcurrentWritersProduceWholeLines) {
  set_format(Format::json);
  constexpr int threads = 8, per_thread = 500;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([t] {
      for (int i = 0; i < per_thread; ++i) info("tick", {{"thread", t}, {"i", i}});
    });
  for (auto& w : workers) w.join();
  ASSERT_EQ(lines_.size(), size_t(threads * per_thread));
  std::vector<int> next(threads, 0);
  for (auto& line : lines_) {
    auto j = nlohmann::json::parse(line);  // throws on a torn line
    int t = j["thread"];
    EXPECT_EQ(j["i"].get<int>(), next[t]++) << "lines of one thread stay in order";
  }
}

}  // namespace
}  // namespace tally::log
