// TuningStoreCatalog (executor/tuning_store_catalog.hpp): the engines' plain
// TuningRecords round-trip through the SQLite tuning cache, observations
// count every store, and parallel sessions storing at once lose nothing.
#include "executor/tuning_store_catalog.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "common/error.hpp"
#include "gpu/tuner/search_state_json.hpp"
#include "tests/tuner/synthetic_space.hpp"
#include "tests/tuner/tuning_cache_fixture.hpp"

namespace tally::executor {
namespace {

namespace fs = std::filesystem;

class TuningStoreCatalogTest : public tally::testing::TuningCacheFixture {};

gpu::LaunchConfig at(int tpb, int bps) {
  gpu::LaunchConfig c;
  c.threads_per_block = tpb;
  c.blocks_per_sm = bps;
  return c;
}

TuningRecord record_for(const std::string& device, const std::string& variant, int tpb_opt, int bps_opt) {
  gpu::DamonSearch search(gpu::testing::paper_grid(), {at(512, 1)});
  gpu::testing::drive(search, gpu::testing::bowl(tpb_opt, bps_opt));
  TuningRecord r;
  r.device = device;
  r.signature = "key=int4;values=int4;aggs=count_rows,sum_int(0)";
  r.variant = variant;
  r.bucket = 20;
  r.best_config = gpu::to_string(*search.state().best);
  r.seconds_per_row = *search.best_seconds_per_row();
  r.observations = 1;
  r.search_state = gpu::to_json(search.state()).dump();
  r.source = "search";
  return r;
}

TEST_F(TuningStoreCatalogTest, RoundTripsAndCountsObservations) {
  TuningStoreCatalog store(*cache_);
  const auto r = record_for("gpu-a", "global", 64, 16);
  store.store(r);
  store.store(r);
  const auto loaded = store.load("gpu-a", r.signature, 20);
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].variant, "global");
  EXPECT_EQ(loaded[0].best_config, gpu::to_string(at(64, 16)));
  EXPECT_DOUBLE_EQ(loaded[0].seconds_per_row, r.seconds_per_row);
  EXPECT_EQ(loaded[0].observations, 2);
  EXPECT_EQ(loaded[0].source, "search");
  EXPECT_FALSE(loaded[0].updated_at.empty());
  EXPECT_EQ(gpu::search_state_from_json(nlohmann::json::parse(loaded[0].search_state))->best, at(64, 16));
  EXPECT_TRUE(store.load("gpu-b", r.signature, 20).empty());  // another device sees nothing
  EXPECT_TRUE(store.load("gpu-a", r.signature, 19).empty());
}

TEST_F(TuningStoreCatalogTest, ParallelSessionsLoseNoObservation) {
  TuningStoreCatalog store(*cache_);
  const auto r = record_for("gpu-a", "sort", 128, 8);
  constexpr int kThreads = 6, kStores = 15;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kStores; ++i) {
        store.store(r);
        (void)store.load("gpu-a", r.signature, 20);
      }
    });
  }
  for (auto& t : threads) t.join();
  const auto loaded = store.load("gpu-a", r.signature, 20);
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].observations, kThreads * kStores);
}

TEST_F(TuningStoreCatalogTest, ARecordWithoutSearchStateIsRejected) {
  TuningStoreCatalog store(*cache_);
  auto r = record_for("gpu-a", "global", 64, 16);
  r.search_state = "[]";
  EXPECT_THROW(store.store(r), Error);
  EXPECT_TRUE(store.load("gpu-a", r.signature, 20).empty());
}

}  // namespace
}  // namespace tally::executor
