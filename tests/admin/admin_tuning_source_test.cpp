// AdminTuningSource: /tuning's JSON read from the catalog's SQLite file
// through its own connection, including entries another connection (the
// tuner's) writes while it is open.
#include "server/admin_tuning_source.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "catalog/tuning_cache.hpp"

namespace tally::server {
namespace {

namespace fs = std::filesystem;

class AdminTuningSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tally_admin_tuning_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "catalog.sqlite3").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static catalog::TuningEntry entry(const std::string& variant, int bucket, int tpb) {
    catalog::TuningEntry e;
    e.key = {"Test GPU|sm_90", catalog::operator_signature({"int4"}, 4, {"count"}), variant, bucket};
    e.best.threads_per_block = tpb;
    e.best.blocks_per_sm = 4;
    e.seconds_per_row = 5e-10;
    e.observations = 3;
    e.search.best = e.best;
    e.search.measured[e.best] = 5e-10;
    return e;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(AdminTuningSourceTest, ShowsWhatTheTunerWritesThroughAnotherConnection) {
  AdminTuningSource source(path_, {{"name", "Test GPU"}});
  auto empty = nlohmann::json::parse(source.json());
  EXPECT_EQ(empty["device"]["name"], "Test GPU");
  EXPECT_TRUE(empty["entries"].is_array());
  EXPECT_EQ(empty["entries"].size(), 0u);
  EXPECT_EQ(source.entry_count(), 0u);

  auto tuner = catalog::TuningCache::open(path_);  // the writer, as the tuner holds it
  tuner->put(entry("global", 12, 256));
  tuner->put(entry("shared_memory", 8, 128));
  auto json = nlohmann::json::parse(source.json());
  ASSERT_EQ(json["entries"].size(), 2u);
  EXPECT_EQ(source.entry_count(), 2u);
  for (const auto& e : json["entries"]) {
    EXPECT_EQ(e["device"], "Test GPU|sm_90");
    EXPECT_TRUE(e.contains("best_config"));
    EXPECT_TRUE(e.contains("measured_grid"));
    EXPECT_EQ(e["observations"], 3);
  }
}

TEST_F(AdminTuningSourceTest, NoDeviceIsNull) {
  AdminTuningSource source(path_, nullptr);
  EXPECT_TRUE(nlohmann::json::parse(source.json())["device"].is_null());
}

TEST_F(AdminTuningSourceTest, AnUnopenableFileThrows) {
  EXPECT_THROW(AdminTuningSource((dir_ / "missing" / "x.sqlite3").string(), nullptr), std::exception);
}

}  // namespace
}  // namespace tally::server
