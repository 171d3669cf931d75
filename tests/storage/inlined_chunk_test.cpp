// Part chunks kept in the catalog (catalog::ChunkInfo::inlined): written with
// the chunk list in one SQLite commit, read back after a reopen and from a
// block's uncommitted snapshot, their bytes deleted once no reader can reach
// them, checked as files are, and a chunk too large for the catalog in files.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <mutex>

#include "common/error.hpp"
#include "tests/storage/table_store_fixture.hpp"

using namespace tally;
namespace fs = std::filesystem;

namespace {

class InlinedChunkTest : public tally::testing::TableStoreTest {
 protected:
  void SetUp() override {
    TableStoreTest::SetUp();
    open(4, uint64_t{1} << 20);
  }
  size_t column_files(uint32_t oid) {
    size_t files = 0;
    for (const auto& f : fs::directory_iterator(store_->table_dir(oid))) files += f.path().extension() == ".col";
    return files;
  }
  bool has_bytes(uint32_t oid, uint64_t chunk_id) { return catalog_->chunk_bytes(oid, chunk_id, 0).has_value(); }
  void exec(const char* sql) {
    std::lock_guard lock(catalog_->mutex());
    ASSERT_EQ(sqlite3_exec(catalog_->handle(), sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  }
};

TEST_F(InlinedChunkTest, APartChunkLivesInTheCatalogAndReadsBackAfterAReopen) {
  const uint32_t oid = make_table();
  append(oid, 0, 6);  // a full chunk of 4 rows in files, a part chunk of 2 in the catalog
  const auto snap = catalog_->find_table(oid);
  ASSERT_EQ(snap->chunks.size(), 2u);
  EXPECT_FALSE(snap->chunks[0].inlined);
  EXPECT_TRUE(snap->chunks[1].inlined);
  EXPECT_EQ(snap->chunks[1].stored, nullptr);  // a committed snapshot holds no bytes
  EXPECT_EQ(column_files(oid), 3u);
  EXPECT_TRUE(has_bytes(oid, snap->chunks[1].chunk_id));
  EXPECT_EQ(snap->chunks[1].stats[0].min_int, 4);
  EXPECT_EQ(snap->chunks[1].stats[2].null_count, 1u);
  const auto before = rows(oid);
  ASSERT_EQ(before.size(), 6u);
  EXPECT_EQ(before[5], "5|n2|NULL");
  open(4, uint64_t{1} << 20);
  EXPECT_EQ(store_->recover(), 0u);
  EXPECT_TRUE(catalog_->find_table(oid)->chunks[1].inlined);
  EXPECT_EQ(rows(oid), before);
}

TEST_F(InlinedChunkTest, ABlockReadsItsOwnUncommittedPartChunk) {
  storage::WriteTransaction txn(*store_);
  catalog::TableDef def;
  def.name = "fresh";
  def.columns = {{"id", {TypeId::int4}, true}, {"name", {TypeId::text}, false}, {"x", {TypeId::float8}, false}};
  const uint32_t oid = txn.create_table(def, false)->def.oid;
  append(oid, 0, 3, true, &txn);
  const auto working = txn.find_table("fresh");
  ASSERT_TRUE(working->chunks.at(0).inlined);
  EXPECT_FALSE(has_bytes(oid, working->chunks[0].chunk_id));  // not committed yet
  EXPECT_EQ(rows(*working), (std::vector<std::string>{"0|n0|0.000000", "1|n1|NULL", "2|n2|1.000000"}));
  txn.commit();
  EXPECT_EQ(column_files(oid), 0u);
  open(4, uint64_t{1} << 20);
  EXPECT_EQ(store_->recover(), 0u);
  EXPECT_EQ(rows(oid), (std::vector<std::string>{"0|n0|0.000000", "1|n1|NULL", "2|n2|1.000000"}));
}

TEST_F(InlinedChunkTest, ReplacedAndDroppedChunksLoseTheirBytesOnceNoReaderHoldsThem) {
  const uint32_t oid = make_table();
  append(oid, 0, 1);
  auto old_snap = catalog_->find_table(oid);
  const uint64_t first = old_snap->chunks.at(0).chunk_id;
  append(oid, 1, 2);  // merges the 1-row tail into a new part chunk
  const uint64_t second = catalog_->find_table(oid)->chunks.at(0).chunk_id;
  ASSERT_NE(first, second);
  store_->collect_retired();
  // The old snapshot still reads the replaced chunk.
  EXPECT_EQ(rows(*old_snap), (std::vector<std::string>{"0|n0|0.000000"}));
  EXPECT_TRUE(has_bytes(oid, first));
  old_snap.reset();
  store_->collect_retired();
  const uint32_t other = [&] {
    catalog::TableDef def;
    def.name = "other";
    def.columns = {{"id", {TypeId::int4}, true}, {"name", {TypeId::text}, false}, {"x", {TypeId::float8}, false}};
    return store_->create_table(def)->def.oid;
  }();
  append(other, 0, 1);  // the next commit deletes what was let go
  EXPECT_FALSE(has_bytes(oid, first));
  EXPECT_TRUE(has_bytes(oid, second));
  store_->drop_table(oid);
  store_->collect_retired();
  append(other, 1, 2);
  EXPECT_FALSE(has_bytes(oid, second));
  EXPECT_EQ(rows(other).size(), 2u);
}

TEST_F(InlinedChunkTest, BytesNoChunkReachesAreDeletedAtStartUp) {
  const uint32_t oid = make_table();
  append(oid, 0, 2);
  const uint64_t live = catalog_->find_table(oid)->chunks.at(0).chunk_id;
  // A crash after a DROP's commit, before the bytes' deletion; and a dropped column's.
  exec("INSERT INTO tally_chunk_bytes(table_oid, chunk_id, slot, bytes) VALUES (99999, 1, 0, x'00')");
  exec(("INSERT INTO tally_chunk_bytes(table_oid, chunk_id, slot, bytes) VALUES (" + std::to_string(oid) + ", " +
        std::to_string(live) + ", 7, x'00')").c_str());
  EXPECT_TRUE(catalog_->chunk_bytes(99999, 1, 0).has_value());
  open(4, uint64_t{1} << 20);
  store_->recover();
  EXPECT_FALSE(catalog_->chunk_bytes(99999, 1, 0).has_value());
  EXPECT_FALSE(catalog_->chunk_bytes(oid, live, 7).has_value());
  EXPECT_EQ(rows(oid).size(), 2u);
}

TEST_F(InlinedChunkTest, DamagedOrMissingBytesAreCorruption) {
  const uint32_t oid = make_table();
  append(oid, 0, 2);
  const std::string where = "WHERE table_oid = " + std::to_string(oid) + " AND slot = 2";
  exec(("UPDATE tally_chunk_bytes SET bytes = substr(bytes, 1, length(bytes) - 1) || x'00' " + where).c_str());
  open(4, uint64_t{1} << 20);  // nothing cached
  try {
    rows(oid);
    FAIL() << "a damaged chunk read as data";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::data_corrupted);
    EXPECT_NE(std::string(e.what()).find("checksum mismatch in the catalog"), std::string::npos) << e.what();
  }
  exec(("DELETE FROM tally_chunk_bytes " + where).c_str());
  open(4, uint64_t{1} << 20);
  try {
    rows(oid);
    FAIL() << "a chunk without its bytes read as data";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::data_corrupted);
  }
}

TEST_F(InlinedChunkTest, APartChunkBeyondTheLimitGoesToFiles) {
  open(4, 64);  // less than one column's header and checksum
  const uint32_t oid = make_table();
  append(oid, 0, 2);
  const auto snap = catalog_->find_table(oid);
  EXPECT_FALSE(snap->chunks.at(0).inlined);
  EXPECT_EQ(column_files(oid), 3u);
  EXPECT_FALSE(has_bytes(oid, snap->chunks[0].chunk_id));
  EXPECT_EQ(rows(oid), (std::vector<std::string>{"0|n0|0.000000", "1|n1|NULL"}));
}

}  // namespace
