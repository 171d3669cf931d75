#include "catalog/tuning_cache.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.hpp"
#include "gpu/tuner/search_state_json.hpp"
#include "tests/tuner/synthetic_space.hpp"
#include "tests/common/test_directory.hpp"

namespace tally::catalog {
namespace {

namespace fs = std::filesystem;

class TuningCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tally::testing::fresh_test_directory("tally_tuning_cache");
    path_ = (dir_ / "catalog.sqlite3").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string path_;
};

gpu::LaunchConfig at(int tpb, int bps) {
  gpu::LaunchConfig c;
  c.threads_per_block = tpb;
  c.blocks_per_sm = bps;
  return c;
}

// A finished search on a synthetic space, as a query would leave it.
gpu::SearchState finished_search(int tpb_opt, int bps_opt) {
  gpu::DamonSearch search(gpu::testing::paper_grid(), {at(512, 1)});
  gpu::testing::drive(search, gpu::testing::bowl(tpb_opt, bps_opt));
  return search.state();
}

const TuningKey kH100{"NVIDIA H100 80GB HBM3|sm_90|132sm|85029158912B|drv12040",
                      operator_signature({"int4"}, 4, {"sum(int8)", "count"}), "global", 20};

TEST_F(TuningCacheTest, SurvivesReopening) {
  const auto state = finished_search(64, 16);
  {
    auto cache = TuningCache::open(path_);
    const auto entry = cache->record(kH100, state, TuningSource::search);
    EXPECT_EQ(entry.best, at(64, 16));
    EXPECT_EQ(entry.observations, 1);
  }
  auto reopened = TuningCache::open(path_);
  const auto found = reopened->find(kH100);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->best, at(64, 16));
  EXPECT_DOUBLE_EQ(found->seconds_per_row, state.measured.at(at(64, 16)));
  EXPECT_EQ(found->observations, 1);
  EXPECT_EQ(found->source, TuningSource::search);
  EXPECT_TRUE(found->search.converged);
  EXPECT_EQ(found->search.measured, state.measured);
  EXPECT_EQ(found->search.path.size(), state.path.size());
  EXPECT_FALSE(found->updated_at.empty());

  // The persisted state continues as a search that has already converged.
  gpu::DamonSearch resumed(gpu::testing::paper_grid(), found->search);
  EXPECT_TRUE(resumed.converged());
  EXPECT_EQ(resumed.next_configuration(), at(64, 16));
}

// A search whose first measurement is still open, as a short query leaves it
// (two of a window's three times in).
gpu::SearchState open_search() {
  gpu::DamonSearch search(gpu::testing::paper_grid(), {at(512, 1)});
  const gpu::LaunchConfig c = search.next_configuration();
  search.report(c, 3e-9);
  search.report(search.next_configuration(), 1e-9);
  return search.state();
}

TEST_F(TuningCacheTest, AnOpenMeasurementIsKeptUntilOneFinishes) {
  const gpu::SearchState open = open_search();
  ASSERT_FALSE(open.best.has_value());
  ASSERT_TRUE(open.measuring.has_value());
  ASSERT_EQ(open.measuring_times.size(), 2u);
  {
    auto cache = TuningCache::open(path_);
    const auto e = cache->record(kH100, open, TuningSource::rule);
    EXPECT_EQ(e.source, TuningSource::measuring);
    EXPECT_EQ(e.best, *open.measuring);
    EXPECT_DOUBLE_EQ(e.seconds_per_row, 3e-9);  // the upper middle of two: not the mean
  }
  auto cache = TuningCache::open(path_);
  const auto found = cache->find(kH100);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->source, TuningSource::measuring);
  EXPECT_EQ(found->search.measuring_times, open.measuring_times);  // the next query continues it
  // A finished search replaces it, with its own (possibly slower) best.
  const auto finished = cache->record(kH100, finished_search(64, 16), TuningSource::search);
  EXPECT_EQ(finished.source, TuningSource::search);
  EXPECT_EQ(finished.best, at(64, 16));
  EXPECT_EQ(finished.observations, 2);
  // An open measurement never replaces a measured best.
  const auto kept = cache->record(kH100, open, TuningSource::rule);
  EXPECT_EQ(kept.source, TuningSource::search);
  EXPECT_EQ(kept.best, at(64, 16));
  EXPECT_EQ(cache->find(kH100)->observations, 2);
  // A search with nothing measured is still refused.
  gpu::DamonSearch untouched(gpu::testing::paper_grid(), {at(512, 1)});
  EXPECT_THROW(cache->record(kH100, untouched.state(), TuningSource::rule), Error);
}

TEST_F(TuningCacheTest, AnotherGpusEntriesAreNeverUsed) {
  auto cache = TuningCache::open(path_);
  cache->record(kH100, finished_search(64, 16), TuningSource::search);
  TuningKey other = kH100;
  other.device = "NVIDIA A100-SXM4-40GB|sm_80|108sm|42314694656B|drv12040";
  EXPECT_FALSE(cache->find(other).has_value());
  EXPECT_TRUE(cache->find_variants(other.device, other.operator_signature, other.cardinality_bucket).empty());
  TuningKey new_driver = kH100;
  new_driver.device = "NVIDIA H100 80GB HBM3|sm_90|132sm|85029158912B|drv12050";
  EXPECT_FALSE(cache->find(new_driver).has_value());

  cache->record(other, finished_search(1024, 2), TuningSource::search);
  EXPECT_EQ(cache->find(kH100)->best, at(64, 16));
  EXPECT_EQ(cache->find(other)->best, at(1024, 2));
  EXPECT_EQ(cache->entries(kH100.device).size(), 1u);
  EXPECT_EQ(cache->entries().size(), 2u);
  EXPECT_EQ(cache->forget_device(other.device), 1);
  EXPECT_FALSE(cache->find(other).has_value());
  EXPECT_TRUE(cache->find(kH100).has_value());
}

TEST_F(TuningCacheTest, KeyPartsAreAllSignificant) {
  auto cache = TuningCache::open(path_);
  cache->record(kH100, finished_search(64, 16), TuningSource::search);
  TuningKey k = kH100;
  k.cardinality_bucket = 21;
  EXPECT_FALSE(cache->find(k));
  k = kH100;
  k.variant = "shared_memory";
  EXPECT_FALSE(cache->find(k));
  k = kH100;
  k.operator_signature = operator_signature({"int8"}, 8, {"count", "sum(int8)"});
  EXPECT_FALSE(cache->find(k));
  // The aggregate order does not matter.
  k = kH100;
  k.operator_signature = operator_signature({"int4"}, 4, {"count", "sum(int8)"});
  EXPECT_TRUE(cache->find(k));
}

TEST_F(TuningCacheTest, RecordCountsObservationsAndKeepsTheFasterConfiguration) {
  auto cache = TuningCache::open(path_);
  cache->record(kH100, finished_search(64, 16), TuningSource::search);
  // A later query converged elsewhere, slower, without re-measuring 64x16.
  gpu::SearchState worse;
  worse.measured[at(256, 8)] = 5.0;
  worse.best = at(256, 8);
  worse.converged = true;
  const auto e = cache->record(kH100, worse, TuningSource::explored);
  EXPECT_EQ(e.observations, 2);
  EXPECT_EQ(e.best, at(64, 16));
  // Re-measured slower (the data changed): the new measurement wins.
  gpu::SearchState changed = worse;
  changed.measured[at(64, 16)] = 7.0;
  const auto e2 = cache->record(kH100, changed, TuningSource::search);
  EXPECT_EQ(e2.observations, 3);
  EXPECT_EQ(e2.best, at(256, 8));
  EXPECT_DOUBLE_EQ(cache->find(kH100)->seconds_per_row, 5.0);
}

TEST_F(TuningCacheTest, SharesTheCatalogConnection) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE other_catalog_table (x INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
  {
    TuningCache cache(db);
    cache.record(kH100, finished_search(32, 32), TuningSource::rule);
  }
  // The connection is still usable and the other table untouched.
  EXPECT_EQ(sqlite3_exec(db, "INSERT INTO other_catalog_table VALUES (1)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(TuningCache::open(path_)->find(kH100)->source, TuningSource::rule);
}

TEST_F(TuningCacheTest, UnreadableRowIsIgnoredNotFatal) {
  auto cache = TuningCache::open(path_);
  cache->record(kH100, finished_search(64, 16), TuningSource::search);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE tally_tuning_cache SET search_state = '{not json'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_FALSE(cache->find(kH100).has_value());
  EXPECT_TRUE(cache->entries().empty());
  // The next query overwrites it.
  cache->record(kH100, finished_search(64, 16), TuningSource::search);
  EXPECT_TRUE(cache->find(kH100).has_value());
}

TEST_F(TuningCacheTest, OpenFailureIsACleanError) {
  try {
    TuningCache::open((dir_ / "missing_dir" / "x.sqlite3").string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::io_error);
  }
}

TEST_F(TuningCacheTest, AdminJsonHasTheGridAndThePath) {
  auto cache = TuningCache::open(path_);
  const auto state = finished_search(64, 16);
  cache->record(kH100, state, TuningSource::search);
  const auto json = to_json(cache->entries());
  ASSERT_EQ(json.size(), 1u);
  const auto& e = json[0];
  EXPECT_EQ(e["variant"], "global");
  EXPECT_EQ(e["cardinality_bucket"], 20);
  EXPECT_EQ(e["best_config"], gpu::to_string(at(64, 16)));
  EXPECT_EQ(e["measured_grid"].size(), state.measured.size());
  EXPECT_EQ(e["search_path"].size(), state.path.size());
  EXPECT_EQ(e["search_path"][0]["event"], "initial");
  EXPECT_EQ(e["groups_from"], 1048576.0);
}

TEST(CardinalityBucket, IsFloorLog2) {
  EXPECT_EQ(cardinality_bucket(0), 0);
  EXPECT_EQ(cardinality_bucket(1), 0);
  EXPECT_EQ(cardinality_bucket(2), 1);
  EXPECT_EQ(cardinality_bucket(1023), 9);
  EXPECT_EQ(cardinality_bucket(1024), 10);
  EXPECT_EQ(cardinality_bucket(1e9), 29);
}

TEST(SearchStateJson, RoundTripsAndRejectsInconsistentStates) {
  gpu::DamonSearch search(gpu::testing::paper_grid(), {at(512, 1)});
  for (int i = 0; i < 7; ++i) search.report(search.next_configuration(), 1e-9 * (1 + i % 3) * 0.01 + 1e-9);
  const auto json = gpu::to_json(search.state());
  const auto back = gpu::search_state_from_json(json);
  ASSERT_TRUE(back);
  EXPECT_EQ(gpu::to_json(*back), json);
  auto broken = json;
  broken["queue"].push_back("tpb=2,bps=2,ff=50,rpt=1");  // a reference never measured
  EXPECT_FALSE(gpu::search_state_from_json(broken));
  broken = json;
  broken["version"] = 99;
  EXPECT_FALSE(gpu::search_state_from_json(broken));
  EXPECT_FALSE(gpu::search_state_from_json(nlohmann::json::array()));
}

}  // namespace
}  // namespace tally::catalog
