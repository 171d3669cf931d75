// TuningStore::lists (common/aggregate_engine.hpp): the catalog's store
// says that all() lists every record, an empty cache included, so the GPU
// engine, which reads a listing store once at its first query, loads no key
// on a later query's path when the store was empty then (a tallyd started
// on an empty tuning cache: its first query of each new signature paid a
// SQLite read, ~0.11 ms on the H100 host). The engine side runs on the GPU
// machine (gpu_engine_test.cpp ListingStoreIsNotReadForAKeyItLacks).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "catalog/tuning_cache.hpp"
#include "common/aggregate_engine.hpp"
#include "executor/tuning_store_catalog.hpp"
#include "gpu/tuner/damon_search.hpp"
#include "gpu/tuner/search_state_json.hpp"
#include "tests/tuner/tuning_cache_fixture.hpp"

namespace tally::executor {
namespace {

namespace fs = std::filesystem;

class TuningStoreListingTest : public tally::testing::TuningCacheFixture {};

// A record whose search state has a best configuration (what store() needs).
TuningRecord measured_record(const std::string& signature, int bucket) {
  gpu::LaunchConfig best;
  best.threads_per_block = 512;
  best.blocks_per_sm = 2;
  gpu::SearchState state;
  state.measured[best] = 2e-11;
  state.best = best;
  TuningRecord r;
  r.device = "gpu-a";
  r.signature = signature;
  r.variant = "global";
  r.bucket = bucket;
  r.best_config = gpu::to_string(best);
  r.seconds_per_row = 2e-11;
  r.observations = 1;
  r.search_state = gpu::to_json(state).dump();
  r.source = "rule";
  return r;
}

// A store that overrides nothing but load/store: the seam's default.
class LoadOnlyStore final : public TuningStore {
 public:
  std::vector<TuningRecord> load(const std::string&, const std::string&, int) override { return {}; }
  void store(const TuningRecord&) override {}
};

TEST_F(TuningStoreListingTest, CatalogStoreListsEvenWhenEmpty) {
  TuningStoreCatalog store(*cache_);
  EXPECT_TRUE(store.lists());
  EXPECT_TRUE(store.all().empty());  // empty, and complete: no key is stored
  EXPECT_TRUE(store.load("gpu-a", "key=int4;values=int4;aggs=count_rows,sum_int(0)", 11).empty());
}

// What lists() promises the engine: every stored record is in all(), so a
// key all() lacks is one load() does not find either.
TEST_F(TuningStoreListingTest, CatalogListingHoldsEveryStoredKey) {
  TuningStoreCatalog store(*cache_);
  const std::string min_sig = "key=int4;values=int4;aggs=min_int(0)";
  const std::string sum_sig = "key=int4;values=int4;aggs=count_rows,sum_int(0)";
  store.store(measured_record(min_sig, 11));
  store.store(measured_record(sum_sig, 16));
  const auto all = store.all();
  ASSERT_EQ(all.size(), 2u);
  for (const auto& [sig, bucket] : {std::pair{min_sig, 11}, std::pair{sum_sig, 16}, std::pair{sum_sig, 11}}) {
    const bool listed = std::any_of(all.begin(), all.end(), [&](const TuningRecord& r) {
      return r.signature == sig && r.bucket == bucket && r.device == "gpu-a";
    });
    EXPECT_EQ(listed, !store.load("gpu-a", sig, bucket).empty()) << sig << " bucket " << bucket;
  }
}

TEST(TuningStoreListing, AStoreThatDoesNotSaySoIsNotTakenAsListing) {
  LoadOnlyStore store;
  EXPECT_FALSE(store.lists());
  EXPECT_TRUE(store.all().empty());
}

}  // namespace
}  // namespace tally::executor
