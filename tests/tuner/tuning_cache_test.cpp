// The catalog's tuning cache (catalog/tuning_cache.hpp) keeps records as opaque
// text; the tuning store over it (executor/tuning_store_catalog.hpp) parses and
// merges them. These tests go through the store as the engines do.
#include "catalog/tuning_cache.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "common/error.hpp"
#include "executor/tuning_store_catalog.hpp"
#include "gpu/tuner/cardinality_bucket.hpp"
#include "gpu/tuner/search_state_json.hpp"
#include "tests/tuner/synthetic_space.hpp"
#include "tests/common/test_directory.hpp"

namespace tally::catalog {
namespace {

namespace fs = std::filesystem;
using executor::TuningStoreCatalog;

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

struct TuningKey {
  std::string device;
  std::string operator_signature;
  std::string variant;
  int cardinality_bucket = 0;
};

// A stored record as the tuner reads it back.
struct Stored {
  gpu::LaunchConfig best;
  double seconds_per_row = 0;
  int64_t observations = 0;
  std::string source;
  gpu::SearchState search;
  std::string updated_at;
};

std::optional<Stored> find(const TuningCache& cache, const TuningKey& k) {
  const auto r = cache.find(k.device, k.operator_signature, k.variant, k.cardinality_bucket);
  if (!r || !executor::readable(*r)) return std::nullopt;
  return Stored{*gpu::parse_launch_config(r->best_config), r->seconds_per_row, r->observations, r->source,
                *gpu::search_state_from_json(nlohmann::json::parse(r->search_state)), r->updated_at};
}

// What a query's tuner reports, stored through the engines' tuning store;
// returns what is stored afterwards.
Stored record(TuningCache& cache, const TuningKey& k, const gpu::SearchState& state, const std::string& source) {
  TuningRecord r;
  r.device = k.device;
  r.signature = k.operator_signature;
  r.variant = k.variant;
  r.bucket = k.cardinality_bucket;
  r.search_state = gpu::to_json(state).dump();
  r.source = source;
  TuningStoreCatalog(cache).store(r);
  return *find(cache, k);
}

const TuningKey kH100{"NVIDIA H100 80GB HBM3|sm_90|132sm|85029158912B|drv12040",
                      "keys=int4;width=4;aggs=count,sum(int8)", "global", 20};

TEST_F(TuningCacheTest, SurvivesReopening) {
  const auto state = finished_search(64, 16);
  {
    auto cache = TuningCache::open(path_);
    const auto entry = record(*cache, kH100, state, "search");
    EXPECT_EQ(entry.best, at(64, 16));
    EXPECT_EQ(entry.observations, 1);
  }
  auto reopened = TuningCache::open(path_);
  const auto found = find(*reopened, kH100);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->best, at(64, 16));
  EXPECT_DOUBLE_EQ(found->seconds_per_row, state.measured.at(at(64, 16)));
  EXPECT_EQ(found->observations, 1);
  EXPECT_EQ(found->source, "search");
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
    const auto e = record(*cache, kH100, open, "rule");
    EXPECT_EQ(e.source, "measuring");
    EXPECT_EQ(e.best, *open.measuring);
    EXPECT_DOUBLE_EQ(e.seconds_per_row, 3e-9);  // the upper middle of two: not the mean
  }
  auto cache = TuningCache::open(path_);
  const auto found = find(*cache, kH100);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->source, "measuring");
  EXPECT_EQ(found->search.measuring_times, open.measuring_times);  // the next query continues it
  // A finished search replaces it, with its own (possibly slower) best.
  const auto finished = record(*cache, kH100, finished_search(64, 16), "search");
  EXPECT_EQ(finished.source, "search");
  EXPECT_EQ(finished.best, at(64, 16));
  EXPECT_EQ(finished.observations, 2);
  // An open measurement never replaces a measured best.
  const auto kept = record(*cache, kH100, open, "rule");
  EXPECT_EQ(kept.source, "search");
  EXPECT_EQ(kept.best, at(64, 16));
  EXPECT_EQ(find(*cache, kH100)->observations, 2);
  // A search with nothing measured is still refused.
  gpu::DamonSearch untouched(gpu::testing::paper_grid(), {at(512, 1)});
  EXPECT_THROW(record(*cache, kH100, untouched.state(), "rule"), Error);
}

TEST_F(TuningCacheTest, AnotherGpusEntriesAreNeverUsed) {
  auto cache = TuningCache::open(path_);
  record(*cache, kH100, finished_search(64, 16), "search");
  TuningKey other = kH100;
  other.device = "NVIDIA A100-SXM4-40GB|sm_80|108sm|42314694656B|drv12040";
  EXPECT_FALSE(find(*cache, other).has_value());
  EXPECT_TRUE(cache->find_variants(other.device, other.operator_signature, other.cardinality_bucket).empty());
  TuningKey new_driver = kH100;
  new_driver.device = "NVIDIA H100 80GB HBM3|sm_90|132sm|85029158912B|drv12050";
  EXPECT_FALSE(find(*cache, new_driver).has_value());

  record(*cache, other, finished_search(1024, 2), "search");
  EXPECT_EQ(find(*cache, kH100)->best, at(64, 16));
  EXPECT_EQ(find(*cache, other)->best, at(1024, 2));
  EXPECT_EQ(cache->entries(kH100.device).size(), 1u);
  EXPECT_EQ(cache->entries().size(), 2u);
  EXPECT_EQ(cache->forget_device(other.device), 1);
  EXPECT_FALSE(find(*cache, other).has_value());
  EXPECT_TRUE(find(*cache, kH100).has_value());
}

TEST_F(TuningCacheTest, KeyPartsAreAllSignificant) {
  auto cache = TuningCache::open(path_);
  record(*cache, kH100, finished_search(64, 16), "search");
  TuningKey k = kH100;
  k.cardinality_bucket = 21;
  EXPECT_FALSE(find(*cache, k));
  k = kH100;
  k.variant = "shared_memory";
  EXPECT_FALSE(find(*cache, k));
  k = kH100;
  k.operator_signature = "keys=int8;width=8;aggs=count,sum(int8)";
  EXPECT_FALSE(find(*cache, k));
  // The aggregate order does not matter.
  k = kH100;
  k.operator_signature = "keys=int4;width=4;aggs=count,sum(int8)";
  EXPECT_TRUE(find(*cache, k));
}

TEST_F(TuningCacheTest, RecordCountsObservationsAndKeepsTheFasterConfiguration) {
  auto cache = TuningCache::open(path_);
  record(*cache, kH100, finished_search(64, 16), "search");
  // A later query converged elsewhere, slower, without re-measuring 64x16.
  gpu::SearchState worse;
  worse.measured[at(256, 8)] = 5.0;
  worse.best = at(256, 8);
  worse.converged = true;
  const auto e = record(*cache, kH100, worse, "explored");
  EXPECT_EQ(e.observations, 2);
  EXPECT_EQ(e.best, at(64, 16));
  // Re-measured slower (the data changed): the new measurement wins.
  gpu::SearchState changed = worse;
  changed.measured[at(64, 16)] = 7.0;
  const auto e2 = record(*cache, kH100, changed, "search");
  EXPECT_EQ(e2.observations, 3);
  EXPECT_EQ(e2.best, at(256, 8));
  EXPECT_DOUBLE_EQ(find(*cache, kH100)->seconds_per_row, 5.0);
}

TEST_F(TuningCacheTest, SharesTheCatalogConnection) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE other_catalog_table (x INTEGER)", nullptr, nullptr, nullptr), SQLITE_OK);
  {
    TuningCache cache(db);
    record(cache, kH100, finished_search(32, 32), "rule");
  }
  // The connection is still usable and the other table untouched.
  EXPECT_EQ(sqlite3_exec(db, "INSERT INTO other_catalog_table VALUES (1)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(find(*TuningCache::open(path_), kH100)->source, "rule");
}

TEST_F(TuningCacheTest, UnreadableRowIsIgnoredNotFatal) {
  auto cache = TuningCache::open(path_);
  record(*cache, kH100, finished_search(64, 16), "search");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE tally_tuning_cache SET search_state = '{not json'", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_FALSE(find(*cache, kH100).has_value());
  EXPECT_TRUE(TuningStoreCatalog(*cache).all().empty());
  EXPECT_EQ(cache->entries().size(), 1u);  // kept as it is: the catalog does not read it
  // The next query overwrites it.
  record(*cache, kH100, finished_search(64, 16), "search");
  EXPECT_TRUE(find(*cache, kH100).has_value());
}

TEST_F(TuningCacheTest, OpenFailureIsACleanError) {
  try {
    TuningCache::open((dir_ / "missing_dir" / "x.sqlite3").string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::io_error);
  }
}

TEST(CardinalityBucket, IsFloorLog2) {
  EXPECT_EQ(gpu::cardinality_bucket(0), 0);
  EXPECT_EQ(gpu::cardinality_bucket(1), 0);
  EXPECT_EQ(gpu::cardinality_bucket(2), 1);
  EXPECT_EQ(gpu::cardinality_bucket(1023), 9);
  EXPECT_EQ(gpu::cardinality_bucket(1024), 10);
  EXPECT_EQ(gpu::cardinality_bucket(1e9), 29);
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
