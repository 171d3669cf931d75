// AdminTuningSource: /tuning's JSON read from the catalog's SQLite file
// through its own connection, including entries another connection (the
// tuner's) writes while it is open.
#include "server/admin_tuning_source.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "catalog/tuning_cache.hpp"
#include "gpu/tuner/damon_search.hpp"
#include "gpu/tuner/search_state_json.hpp"
#include "tests/tuner/synthetic_space.hpp"

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

  static TuningRecord entry(const std::string& variant, int bucket, int tpb) {
    gpu::LaunchConfig best;
    best.threads_per_block = tpb;
    best.blocks_per_sm = 4;
    gpu::SearchState search;
    search.best = best;
    search.measured[best] = 5e-10;
    TuningRecord r;
    r.device = "Test GPU|sm_90";
    r.signature = "keys=int4;width=4;aggs=count";
    r.variant = variant;
    r.bucket = bucket;
    r.best_config = gpu::to_string(best);
    r.seconds_per_row = 5e-10;
    r.observations = 3;
    r.source = "search";
    r.search_state = gpu::to_json(search).dump();
    return r;
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

TEST_F(AdminTuningSourceTest, AnEntryHasTheGridAndThePath) {
  gpu::LaunchConfig start;
  start.threads_per_block = 512;
  start.blocks_per_sm = 1;
  gpu::DamonSearch search(gpu::testing::paper_grid(), {start});
  gpu::testing::drive(search, gpu::testing::bowl(64, 16));
  TuningRecord r = entry("global", 20, 64);
  r.best_config = gpu::to_string(*search.state().best);
  r.search_state = gpu::to_json(search.state()).dump();
  const auto e = tuning_record_json(r);
  EXPECT_EQ(e["variant"], "global");
  EXPECT_EQ(e["cardinality_bucket"], 20);
  EXPECT_EQ(e["best_config"], r.best_config);
  EXPECT_EQ(e["measured_grid"].size(), search.state().measured.size());
  EXPECT_EQ(e["search_path"].size(), search.state().path.size());
  EXPECT_EQ(e["search_path"][0]["event"], "initial");
  EXPECT_EQ(e["groups_from"], 1048576.0);
}

TEST_F(AdminTuningSourceTest, AnUnreadableRowIsLeftOut) {
  AdminTuningSource source(path_, nullptr);
  auto tuner = catalog::TuningCache::open(path_);
  TuningRecord broken = entry("global", 12, 256);
  broken.search_state = "{not json";
  tuner->put(broken);
  tuner->put(entry("sort", 12, 256));
  EXPECT_EQ(source.entry_count(), 1u);
  EXPECT_EQ(nlohmann::json::parse(source.json())["entries"].size(), 1u);
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
