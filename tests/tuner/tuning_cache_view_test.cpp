// SELECT ... FROM tally_tuning_cache on the query engine: the
// process's tuning store (a TuningStoreCatalog over a fresh SQLite file)
// holds what a ChunkTuner-like search stored, and the view shows it with
// PostgreSQL type OIDs and text forms.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "config/config.hpp"
#include "executor/database.hpp"
#include "executor/introspection/catalog_relation_provider.hpp"
#include "executor/sql_session.hpp"
#include "executor/tuning_store_catalog.hpp"
#include "tests/executor/recording_writer.hpp"
#include "gpu/tuner/search_state_json.hpp"
#include "tests/tuner/synthetic_space.hpp"
#include "tests/common/test_directory.hpp"

namespace tally::executor {
namespace {

namespace fs = std::filesystem;

using Result = testing::RecordingWriter::Result;

// Runs sql in a session of an empty database whose catalog relations the
// engine scans; every cell as text ("NULL" for NULL).
std::vector<std::vector<std::string>> run(const std::string& sql, Result* out = nullptr) {
  auto database = Database::open_with_tables(config::Config{}, std::make_unique<MemoryTableProvider>());
  introspection::CatalogRelationProvider relations;
  relations.set_source(introspection::CatalogSource{});
  SqlSession session(database.get(), &database->tables(), tally::SessionInfo{});
  session.set_system_relations(&relations);
  testing::RecordingWriter writer;
  session.simple_query(sql, writer);
  const Result& result = writer.results.at(0);
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : result.rows) {
    rows.emplace_back();
    for (const auto& cell : row) rows.back().push_back(cell.value_or("NULL"));
  }
  if (out) *out = result;
  return rows;
}

TuningRecord searched(const std::string& device, const std::string& variant, int bucket) {
  gpu::LaunchConfig start;
  start.threads_per_block = 512;
  start.blocks_per_sm = 1;
  gpu::DamonSearch search(gpu::testing::paper_grid(), {start});
  gpu::testing::drive(search, gpu::testing::bowl(64, 16));
  TuningRecord r;
  r.device = device;
  r.signature = "key=int4;values=int4;aggs=count_rows,sum_int(0)";
  r.variant = variant;
  r.bucket = bucket;
  r.search_state = gpu::to_json(search.state()).dump();
  r.source = "search";
  return r;
}

class TuningCacheView : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tally::testing::fresh_test_directory("tally_tuning_view");
  }
  void TearDown() override {
    process_tuning_store().store(nullptr);
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(TuningCacheView, EmptyWithoutAStoreButWellTyped) {
  process_tuning_store().store(nullptr);
  Result r;
  EXPECT_TRUE(run("SELECT * FROM tally_tuning_cache", &r).empty());
  ASSERT_EQ(r.fields.size(), 14u);
  EXPECT_EQ(r.fields[0].name, "device");
  EXPECT_EQ(r.fields[3].type_oid, 23u);   // bucket int4
  EXPECT_EQ(r.fields[7].type_oid, 701u);  // seconds_per_row float8
  EXPECT_EQ(r.fields[11].type_oid, 16u);  // converged bool
  EXPECT_EQ(r.fields[13].type_oid, 1184u);  // updated timestamptz
}

TEST_F(TuningCacheView, ListsEveryDevicesEntries) {
  TuningStore* store = install_process_tuning_store((dir_ / "catalog.sqlite3").string());
  ASSERT_EQ(process_tuning_store().load(), store);
  store->store(searched("gpu-a", "global", 20));
  store->store(searched("gpu-a", "global", 20));  // a second query: two observations
  store->store(searched("gpu-b", "sort", 3));
  const auto rows = run(
      "SELECT device, variant, bucket, groups_from, groups_to, configuration, observations, source, converged, "
      "ns_per_row > 0, updated IS NOT NULL FROM tally_tuning_cache ORDER BY device");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"gpu-a", "global", "20", "1048576", "2097151",
                                               "tpb=64,bps=16,ff=50,rpt=1", "2", "search", "t", "t", "t"}));
  EXPECT_EQ(rows[1][0], "gpu-b");
  EXPECT_EQ(rows[1][2], "3");
  EXPECT_EQ(rows[1][3], "8");
  // A filter, and the pg_catalog-qualified name.
  EXPECT_EQ(run("SELECT device, observations FROM tally_tuning_cache WHERE variant = 'sort'"),
            (std::vector<std::vector<std::string>>{{"gpu-b", "1"}}));
  EXPECT_EQ(run("SELECT variant FROM pg_catalog.tally_tuning_cache ORDER BY variant").size(), 2u);
}

}  // namespace
}  // namespace tally::executor
