#pragma once
// Helpers for configuration tests: argv from strings, a scratch directory.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "config/config_loader.hpp"

namespace tally::config::testing {

class ScratchDir {
 public:
  ScratchDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("tally-config-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path(const std::string& name = "") const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return path(name);
  }

 private:
  std::filesystem::path path_;
};

// Runs load_config on "tallyd" + args; the environment gets a scratch data
// directory unless the test sets TALLY_DATA_DIR itself (or sets it to "").
inline LoadResult load(const std::vector<std::string>& args,
                       std::map<std::string, std::string> env, const ScratchDir& dir) {
  if (!env.count("TALLY_DATA_DIR")) env["TALLY_DATA_DIR"] = dir.path("data");
  if (env["TALLY_DATA_DIR"].empty()) env.erase("TALLY_DATA_DIR");
  std::vector<const char*> argv{"tallyd"};
  for (auto& a : args) argv.push_back(a.c_str());
  return load_config(static_cast<int>(argv.size()), argv.data(), env);
}

// The problems of a configuration that must fail; fails the test if it loads.
inline std::vector<std::string> problems_of(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& env,
                                            const ScratchDir& dir) {
  try {
    load(args, env, dir);
  } catch (const ConfigError& e) {
    return e.problems();
  }
  ADD_FAILURE() << "configuration loaded but should have failed";
  return {};
}

inline bool any_contains(const std::vector<std::string>& lines, const std::vector<std::string>& parts) {
  for (auto& line : lines) {
    bool all = true;
    for (auto& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return true;
  }
  return false;
}

inline std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace tally::config::testing
