#pragma once
// A fresh, empty directory for the running test: the system's temporary
// directory / "<prefix>_<pid>_<test name>". The pid and the test's name keep
// tests that ctest runs in parallel (and two runs of one binary) apart; an
// earlier run's leftovers are removed first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace tally::testing {

inline std::filesystem::path fresh_test_directory(const std::string& prefix) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      (prefix + "_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace tally::testing
