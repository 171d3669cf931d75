// config/tally.example.toml must list every setting with its default, and
// every key in it must parse: the file is the documentation operators copy.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "config/setting_table.hpp"
#include "tests/config/config_test_util.hpp"

namespace tally::config {
namespace {

std::string example_path() { return std::string(TALLY_SOURCE_DIR) + "/config/tally.example.toml"; }

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ExampleFile, LoadsAndEqualsTheDefaults) {
  testing::ScratchDir dir;
  // The example's data_dir is relative; load it from inside the scratch directory's
  // point of view by overriding only data_dir.
  LoadResult example = testing::load({"--config", example_path()}, {}, dir);
  LoadResult defaults = testing::load({}, {}, dir);
  for (const Setting& s : setting_table()) {
    if (s.kind == SettingKind::users) continue;
    EXPECT_EQ(s.render(example.config), s.render(defaults.config)) << s.key;
    if (s.key != "data_dir") {
      EXPECT_NE(example.source_of(s.key), "default") << s.key << " is missing from the example";
    }
  }
  ASSERT_EQ(example.config.users.size(), defaults.config.users.size());
  for (size_t i = 0; i < defaults.config.users.size(); ++i) {
    EXPECT_EQ(example.config.users[i].name, defaults.config.users[i].name);
    EXPECT_EQ(example.config.users[i].method, defaults.config.users[i].method);
  }
}

TEST(ExampleFile, EverySettingAppearsWithItsDefaultValue) {
  std::string text = read_all(example_path());
  ASSERT_FALSE(text.empty()) << example_path();
  Config defaults;
  for (const Setting& s : setting_table()) {
    if (s.kind == SettingKind::users) {
      EXPECT_NE(text.find("[[users]]"), std::string::npos);
      continue;
    }
    std::string name = s.key.substr(s.key.rfind('.') == std::string::npos ? 0 : s.key.rfind('.') + 1);
    std::string line = "\n" + name + " = " + s.render(defaults);
    EXPECT_NE(text.find(line), std::string::npos) << "missing line: " << line.substr(1);
  }
}

TEST(ExampleFile, EveryUncommentedKeyIsASetting) {
  std::istringstream in(read_all(example_path()));
  std::string line, section;
  std::regex key_re(R"(^([a-z_0-9]+)\s*=)"), section_re(R"(^\[\[?([a-z_]+)\]\]?)");
  std::smatch m;
  int keys = 0;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, section_re)) {
      section = m[1];
      continue;
    }
    if (!std::regex_search(line, m, key_re)) continue;
    ++keys;
    std::string key = section.empty() ? std::string(m[1]) : section + "." + std::string(m[1]);
    bool known = find_setting_by_key(key) != nullptr || key.starts_with("users.");
    EXPECT_TRUE(known) << "unknown key in the example: " << key;
  }
  EXPECT_GE(keys, static_cast<int>(setting_table().size()));
}

}  // namespace
}  // namespace tally::config
