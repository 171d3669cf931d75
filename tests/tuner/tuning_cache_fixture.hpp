#pragma once
// A test with its own catalog database holding the tuning cache
// (catalog/tuning_cache.hpp), in a fresh directory named after the test
// suite and the test, removed afterwards.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "catalog/tuning_cache.hpp"
#include "tests/common/test_directory.hpp"

namespace tally::testing {

class TuningCacheFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fresh_test_directory(std::string("tally_") +
                                ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name());
    cache_ = catalog::TuningCache::open((dir_ / "catalog.sqlite3").string());
  }
  void TearDown() override {
    cache_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::unique_ptr<catalog::TuningCache> cache_;
};

}  // namespace tally::testing
