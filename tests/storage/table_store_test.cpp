// Catalog + storage: appends, snapshots, reopen, orphan removal, corruption.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <filesystem>
#include <thread>
#include <fstream>

#include "catalog/catalog.hpp"
#include "common/cancel.hpp"
#include "common/error.hpp"
#include "storage/numeric_slot.hpp"
#include "storage/table_appender.hpp"
#include "storage/table_store.hpp"
#include "storage/write_transaction.hpp"
#include "tests/storage/table_store_fixture.hpp"

using namespace tally;
namespace fs = std::filesystem;

namespace {

using tally::testing::TableStoreTest;

TEST_F(TableStoreTest, AppendReadAndReopen) {
  const uint32_t oid = make_table();
  EXPECT_GE(oid, 16384u);
  append(oid, 0, 10);
  auto snap = catalog_->find_table(oid);
  ASSERT_EQ(snap->row_count(), 10u);
  EXPECT_EQ(snap->chunks.size(), 3u);  // 4 + 4 + 2
  const auto before = rows(oid);
  ASSERT_EQ(before.size(), 10u);
  EXPECT_EQ(before[3], "3|n0|NULL");
  EXPECT_EQ(before[4], "4|n1|2.000000");
  // Statistics of chunk 0 column id: min 0, max 3, no NULLs; x: 2 NULLs.
  EXPECT_TRUE(snap->chunks[0].stats[0].has_min_max);
  EXPECT_EQ(snap->chunks[0].stats[0].min_int, 0);
  EXPECT_EQ(snap->chunks[0].stats[0].max_int, 3);
  EXPECT_EQ(snap->chunks[0].stats[2].null_count, 2u);
  EXPECT_EQ(snap->chunks[0].stats[0].hll.size(), 2u + 4096u);
  open();
  EXPECT_EQ(store_->recover(), 0u);
  EXPECT_EQ(rows(oid), before);
  EXPECT_EQ(catalog_->find_table("t")->chunks[0].stats[2].null_count, 2u);
}

TEST_F(TableStoreTest, SmallTailIsMergedAndSnapshotsAreStable) {
  const uint32_t oid = make_table();
  append(oid, 0, 1);
  auto old_snap = catalog_->find_table(oid);
  append(oid, 1, 2);  // merges the 1-row tail
  append(oid, 2, 3);
  auto snap = catalog_->find_table(oid);
  EXPECT_EQ(snap->chunks.size(), 1u);
  EXPECT_EQ(snap->row_count(), 3u);
  EXPECT_EQ(rows(oid), (std::vector<std::string>{"0|n0|0.000000", "1|n1|NULL", "2|n2|1.000000"}));
  EXPECT_EQ(old_snap->row_count(), 1u);  // an old snapshot does not change
  // ... and still reads: the merged tail's files live while it is held.
  EXPECT_EQ(rows(*old_snap), (std::vector<std::string>{"0|n0|0.000000"}));
  old_snap.reset();
  store_->collect_retired();
  // Only the live chunk's files remain.
  size_t files = 0;
  for (const auto& f : fs::directory_iterator(store_->table_dir(oid))) files += f.path().extension() == ".col";
  EXPECT_EQ(files, 3u);
}

// Whole-buffer appends (a large CREATE TABLE AS): a full chunk and a part
// chunk taken without a copy, rows set one by one after the part chunk, and
// buffers that start mid-chunk (copied across the chunk boundary).
TEST_F(TableStoreTest, AppendColumnsTakesChunksAndPartChunks) {
  const uint32_t oid = make_table();
  auto app = store_->begin_append(oid);
  ASSERT_EQ(app->chunk_rows(), 4u);
  const std::string names[] = {"a", "b", "c"};
  int32_t code[3];
  for (int i = 0; i < 3; ++i) code[i] = app->intern(1, names[i], storage::StringDictionary::hash(names[i]));
  // Rows ids [from, from + n): name names[id % 3], x = id * 0.5 except NULL where id % 4 == 1.
  auto add = [&](int from, int n) {
    std::vector<std::vector<uint8_t>> data(3), valid(3);
    data[0].resize(static_cast<size_t>(n) * 4);
    data[1].resize(static_cast<size_t>(n) * 4);
    data[2].resize(static_cast<size_t>(n) * 8);
    valid[2].assign(static_cast<size_t>(n), 1);
    for (int r = 0; r < n; ++r) {
      const int id = from + r;
      std::memcpy(data[0].data() + r * 4, &id, 4);
      std::memcpy(data[1].data() + r * 4, &code[id % 3], 4);
      const double x = id % 4 == 1 ? 0.0 : id * 0.5;
      std::memcpy(data[2].data() + r * 8, &x, 8);
      valid[2][static_cast<size_t>(r)] = id % 4 == 1 ? 0 : 1;
    }
    app->append_columns(static_cast<size_t>(n), data, valid);
  };
  add(0, 4);  // a whole chunk
  add(4, 2);  // a part chunk, then one row set by hand
  *static_cast<int32_t*>(app->value_slot(0)) = 6;
  app->set_text(1, "a");
  *static_cast<double*>(app->value_slot(2)) = 3.0;
  app->finish_row();
  add(7, 4);  // starts mid-chunk: copied, across the boundary
  app->commit();
  const auto snap = catalog_->find_table(oid);
  ASSERT_EQ(snap->row_count(), 11u);
  EXPECT_EQ(snap->chunks.size(), 3u);  // 4 + 4 + 3
  std::vector<std::string> expected;
  for (int id = 0; id < 11; ++id) {
    const std::string name = id == 6 ? "a" : names[id % 3];
    expected.push_back(std::to_string(id) + "|" + name + "|" + (id % 4 == 1 ? "NULL" : std::to_string(id * 0.5)));
  }
  EXPECT_EQ(rows(oid), expected);
  EXPECT_EQ(snap->chunks[0].stats[2].null_count, 1u);
  EXPECT_EQ(snap->chunks[0].stats[0].min_int, 0);
  EXPECT_EQ(snap->chunks[0].stats[0].max_int, 3);
}

TEST_F(TableStoreTest, AbortedAppendLeavesNothing) {
  const uint32_t oid = make_table();
  append(oid, 0, 6);
  append(oid, 6, 20, /*commit=*/false);
  EXPECT_EQ(rows(oid).size(), 6u);
  append(oid, 100, 101);
  EXPECT_EQ(rows(oid).size(), 7u);
  open();
  store_->recover();
  EXPECT_EQ(rows(oid).size(), 7u);
}

TEST_F(TableStoreTest, RecoverRemovesOrphans) {
  const uint32_t oid = make_table();
  append(oid, 0, 5);
  // Files an interrupted append would leave: a chunk file, a dictionary tail,
  // and a directory of a table whose CREATE never committed.
  std::ofstream(store_->chunk_path(oid, 99, 0)) << "partial";
  const auto dict = store_->dictionary_path(oid, 1);
  const auto dict_size = fs::file_size(dict);
  std::ofstream(dict, std::ios::app) << "tail";
  fs::create_directories(store_->table_dir(99999));
  open();
  EXPECT_EQ(store_->recover(), 3u);
  EXPECT_FALSE(fs::exists(store_->chunk_path(oid, 99, 0)));
  EXPECT_FALSE(fs::exists(store_->table_dir(99999)));
  EXPECT_EQ(fs::file_size(dict), dict_size);
  EXPECT_EQ(rows(oid).size(), 5u);
}

TEST_F(TableStoreTest, CorruptionIsReportedNeverRead) {
  const uint32_t oid = make_table();
  append(oid, 0, 4);
  const auto path = store_->chunk_path(oid, catalog_->find_table(oid)->chunks[0].chunk_id, 0);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(65);  // a stored value of id (after the 40-byte header and the 24-byte frame)
    f.put('\x7f');
  }
  open();
  try {
    rows(oid);
    FAIL() << "corruption not detected";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::data_corrupted);
    EXPECT_NE(std::string(e.what()).find("table \"t\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("checksum mismatch"), std::string::npos) << e.what();
  }
  fs::resize_file(path, 30);
  open();
  try {
    rows(oid);
    FAIL() << "truncation not detected";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::data_corrupted);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TEST_F(TableStoreTest, TruncateAndDrop) {
  const uint32_t oid = make_table();
  append(oid, 0, 9);
  auto before = catalog_->find_table(oid);
  rows(*before);  // loads the dictionary
  store_->truncate_table(oid);
  // A reader of the pre-TRUNCATE snapshot still sees its rows and strings.
  store_->collect_retired();
  EXPECT_EQ(rows(*before).size(), 9u);
  EXPECT_EQ(rows(*before)[8], "8|n2|4.000000");
  before.reset();
  EXPECT_EQ(rows(oid).size(), 0u);
  append(oid, 0, 2);
  EXPECT_EQ(rows(oid), (std::vector<std::string>{"0|n0|0.000000", "1|n1|NULL"}));
  EXPECT_EQ(store_->dictionary(*catalog_->find_table(oid), 1)->size(), 2);
  try {
    catalog::TableDef def;
    def.name = "t";
    store_->create_table(def);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::duplicate_table);
    EXPECT_STREQ(e.what(), "relation \"t\" already exists");
  }
  EXPECT_EQ(store_->create_table(catalog::TableDef{0, "public", "t", {}}, true), nullptr);
  store_->drop_table(oid);
  EXPECT_EQ(catalog_->find_table("t"), nullptr);
  store_->collect_retired();  // the store's remover thread deletes the files; this waits for it
  EXPECT_FALSE(fs::exists(store_->table_dir(oid)));
  open();
  EXPECT_EQ(catalog_->find_table("t"), nullptr);
  EXPECT_GT(make_table(), oid);  // oids are never reused
}

TEST_F(TableStoreTest, ConcurrentReadersSeeWholeAppends) {
  // One appender commits 3-row batches (tails merge, chunks retire) while two
  // readers read whole snapshots: every snapshot reads back exactly its rows,
  // ids 0..n-1 in order, never a partial append or a missing file.
  const uint32_t oid = make_table();
  std::atomic<bool> stop{false};
  std::atomic<int> snapshots_read{0};
  auto reader = [&] {
    while (!stop.load()) {
      auto snap = catalog_->find_table(oid);
      const auto r = rows(*snap);
      EXPECT_EQ(r.size(), snap->row_count());
      EXPECT_EQ(r.size() % 3, 0u);
      for (size_t i = 0; i < r.size(); ++i) {
        const std::string prefix = std::to_string(i) + "|n" + std::to_string(i % 3) + "|";
        if (r[i].rfind(prefix, 0) != 0) {
          ADD_FAILURE() << "row " << i << " is " << r[i];
          break;
        }
      }
      ++snapshots_read;
    }
  };
  std::thread r1(reader), r2(reader);
  for (int i = 0; i < 150; ++i) append(oid, i * 3, i * 3 + 3);
  stop = true;
  r1.join();
  r2.join();
  EXPECT_GT(snapshots_read.load(), 10);
  EXPECT_EQ(rows(oid).size(), 450u);
}

TEST_F(TableStoreTest, GroupCommitJoinsConcurrentAppendsAndDropsOnlyAFailedOne) {
  open(1 << 10);
  const uint32_t oid = make_table();
  constexpr int threads = 8, per_thread = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        const int id = t * 1000 + i;
        try {
          store_->append_grouped(oid, [&](storage::TableAppender& app) {
            *static_cast<int32_t*>(app.value_slot(0)) = id;
            app.set_text(1, "n" + std::to_string(id % 3));
            app.set_null(2);
            app.finish_row();
            // Every 7th request of thread 0 fails after adding its row: the
            // row must not survive and the others of its group must.
            if (t == 0 && i % 7 == 3) throw Error(SqlState::data_exception, "injected");
          });
        } catch (const Error& e) {
          EXPECT_EQ(e.state(), SqlState::data_exception);
          ++failures;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  const int failed = failures.load();
  EXPECT_EQ(failed, 4);  // i = 3, 10, 17, 24
  std::set<int> ids;
  for (const auto& r : rows(oid)) ids.insert(std::stoi(r.substr(0, r.find('|'))));
  EXPECT_EQ(ids.size(), static_cast<size_t>(threads * per_thread - failed));
  for (int i = 3; i < per_thread; i += 7) EXPECT_EQ(ids.count(i), 0u) << i;
  EXPECT_EQ(ids.count(7000 + per_thread - 1), 1u);
  // Eight threads on one table queue behind each other's commits: some commits
  // must have carried several statements (a commit takes fsyncs, milliseconds).
  EXPECT_GT(store_->grouped_commits(oid), 0u);
}

TEST_F(TableStoreTest, WideNumericColumnsRoundTripWithTheirScales) {
  catalog::TableDef def;
  def.name = "n";
  def.columns = {{"p38", SqlType::numeric(38, 4), false}, {"u", {TypeId::numeric, -1}, false},
                 {"p10", SqlType::numeric(10, 2), false}};
  const uint32_t oid = store_->create_table(def)->def.oid;
  EXPECT_EQ(storage_width(def.columns[0].type), 16);
  EXPECT_EQ(storage_width(def.columns[1].type), 24);
  EXPECT_EQ(storage_width(def.columns[2].type), 8);
  const __int128 big = static_cast<__int128>(999999999999999999LL) * 100000000000000000LL;  // 35 digits
  {
    auto app = store_->begin_append(oid);
    for (int i = 0; i < 6; ++i) {
      storage::store_numeric(def.columns[0].type, app->value_slot(0), i % 2 ? -big : big + i, 4);
      storage::store_numeric(def.columns[1].type, app->value_slot(1), 15 * (i + 1), i);  // 1.5 at scale 1 ...
      storage::store_numeric(def.columns[2].type, app->value_slot(2), 12345 + i, 2);
      if (i == 5) app->set_null(1);
      app->finish_row();
    }
    app->commit();
  }
  open();  // reopen: read back from the files
  const auto snap = catalog_->find_table(oid);
  const int cols[] = {0, 1, 2};
  size_t row = 0;
  for (size_t c = 0; c < snap->chunks.size(); ++c) {
    const auto b = store_->read_chunk(*snap, c, cols);
    for (size_t r = 0; r < b->rows; ++r, ++row) {
      const auto a = storage::load_numeric(def.columns[0].type, b->columns[0].data.data() + r * 16);
      EXPECT_TRUE(a.mantissa == (row % 2 ? -big : big + static_cast<__int128>(row)));
      EXPECT_EQ(a.scale, 4);
      if (row == 5) {
        EXPECT_TRUE(b->columns[1].is_null(r));
      } else {
        const auto u = storage::load_numeric(def.columns[1].type, b->columns[1].data.data() + r * 24);
        EXPECT_TRUE(u.mantissa == static_cast<__int128>(15 * (row + 1)));
        EXPECT_EQ(u.scale, static_cast<int32_t>(row));
      }
      EXPECT_EQ(storage::load_numeric(def.columns[2].type, b->columns[2].data.data() + r * 8).mantissa,
                static_cast<__int128>(12345 + row));
    }
  }
  EXPECT_EQ(row, 6u);
  // The wide columns' files are format version 2, the int64 one version 4
  // (frame of reference, storage/frame_encoding.hpp, bit-packed).
  const auto version_of = [&](int column) {
    std::ifstream f(store_->chunk_path(oid, snap->chunks[0].chunk_id, column), std::ios::binary);
    char header[8];
    f.read(header, sizeof header);
    uint32_t v;
    std::memcpy(&v, header + 4, sizeof v);
    return v;
  };
  EXPECT_EQ(version_of(0), 2u);
  EXPECT_EQ(version_of(1), 2u);
  EXPECT_EQ(version_of(2), 4u);
}

}  // namespace

static size_t count_files(const fs::path& dir) {
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

TEST_F(TableStoreTest, TransactionBlockCommitsAtomicallyAndSeesItsOwnWrites) {
  const uint32_t oid = make_table();
  append(oid, 0, 3);
  const auto before = rows(oid);
  {
    storage::WriteTransaction txn(*store_);
    append(oid, 3, 10, true, &txn);
    append(oid, 10, 11, true, &txn);  // merges the block's own small tail
    catalog::TableDef def;
    def.name = "fresh";
    def.columns = {{"a", {TypeId::int4}, false}};
    ASSERT_NE(txn.create_table(def, false), nullptr);
    EXPECT_EQ(catalog_->find_table("fresh"), nullptr);  // not committed yet
    EXPECT_EQ(rows(oid), before);                         // others see the committed rows
    EXPECT_EQ(rows(*txn.find_table("t")).size(), 11u);    // the block sees its own
    txn.commit();
  }
  EXPECT_EQ(rows(oid).size(), 11u);
  ASSERT_NE(catalog_->find_table("fresh"), nullptr);
  open();  // what the catalog committed is what a restart reads
  EXPECT_EQ(rows(oid).size(), 11u);
  EXPECT_EQ(store_->recover(), 0u);
}

TEST_F(TableStoreTest, TransactionBlockRollbackRemovesEverything) {
  const uint32_t oid = make_table();
  append(oid, 0, 5);
  const auto before = rows(oid);
  store_->collect_retired(true);
  const size_t files = count_files(dir_ / "tables");
  {
    storage::WriteTransaction txn(*store_);
    append(oid, 5, 20, true, &txn);
    // A new text value: a rolled-back dictionary entry must not be reused.
    auto app = txn.begin_append(oid);
    *static_cast<int32_t*>(app->value_slot(0)) = 100;
    app->set_text(1, "rolled back");
    app->set_null(2);
    app->finish_row();
    app->commit();
    txn.truncate_table(oid);
    EXPECT_TRUE(txn.find_table("t")->chunks.empty());
    txn.rollback();
  }
  EXPECT_EQ(rows(oid), before);
  EXPECT_EQ(count_files(dir_ / "tables"), files);
  // The value appended again after the rollback gets a committed code.
  auto app = store_->begin_append(oid);
  *static_cast<int32_t*>(app->value_slot(0)) = 101;
  app->set_text(1, "rolled back");
  app->set_null(2);
  app->finish_row();
  app->commit();
  open();
  const auto after = rows(oid);
  ASSERT_EQ(after.size(), before.size() + 1);
  EXPECT_NE(std::find(after.begin(), after.end(), "101|rolled back|NULL"), after.end());
}

TEST_F(TableStoreTest, TransactionBlockDropAndUncommittedFilesAfterACrash) {
  const uint32_t oid = make_table();
  append(oid, 0, 5);
  {
    storage::WriteTransaction txn(*store_);
    txn.drop_table(oid);
    EXPECT_EQ(txn.find_table("t"), nullptr);
    EXPECT_NE(catalog_->find_table(oid), nullptr);
    txn.commit();
  }
  EXPECT_EQ(catalog_->find_table(oid), nullptr);
  // A block's files without its commit (a crash): recovery removes them.
  const uint32_t oid2 = make_table();
  append(oid2, 0, 2);
  store_->collect_retired(true);
  const size_t files = count_files(dir_ / "tables");
  auto* txn = new storage::WriteTransaction(*store_);
  append(oid2, 2, 12, true, txn);
  EXPECT_GT(count_files(dir_ / "tables"), files);
  open();  // the block never committed; its object is abandoned as a crash would
  EXPECT_GT(store_->recover(), 0u);
  EXPECT_EQ(count_files(dir_ / "tables"), files);
  EXPECT_EQ(rows(oid2).size(), 2u);
}

// A block that only creates a small table commits in one round: its files
// are synced while SQLite commits. The catalog records the table unsynced
// until a later commit or the start-up check knows its files whole.
class OneRoundCommitTest : public TableStoreTest {
 protected:
  // CREATE TABLE fresh AS ... : a table created and filled by one block.
  uint32_t create_filled(const std::string& name, int rows_wanted) {
    storage::WriteTransaction txn(*store_);
    catalog::TableDef def;
    def.name = name;
    def.columns = {{"id", {TypeId::int4}, true}, {"name", {TypeId::text}, false}, {"x", {TypeId::float8}, false}};
    const auto created = txn.create_table(def, false);
    append(created->def.oid, 0, rows_wanted, true, &txn);
    txn.commit();
    return created->def.oid;
  }
  bool unsynced(uint32_t oid) const {
    const auto list = catalog_->unsynced_tables();
    return std::find(list.begin(), list.end(), oid) != list.end();
  }
};

TEST_F(OneRoundCommitTest, WholeFilesAreKeptAtRecovery) {
  const uint32_t oid = create_filled("fresh", 9);
  ASSERT_NE(catalog_->find_table("fresh"), nullptr);
  const auto before = rows(oid);
  ASSERT_EQ(before.size(), 9u);
  open();  // a crash before any later commit: the table is still recorded unsynced
  EXPECT_TRUE(unsynced(oid));
  EXPECT_EQ(store_->recover(), 0u);
  EXPECT_FALSE(unsynced(oid));
  EXPECT_EQ(rows(oid), before);
  open();  // the check's verdict was committed
  EXPECT_FALSE(unsynced(oid));
  EXPECT_EQ(rows(oid), before);
}

TEST_F(OneRoundCommitTest, ATableWhoseFilesAreNotWholeIsRemovedAtRecovery) {
  const uint32_t kept = create_filled("kept", 5);
  const uint32_t oid = create_filled("cut", 9);
  // The sync of a chunk file did not finish before the crash: part of it is
  // on the disk.
  const auto snap = catalog_->find_table(oid);
  const auto path = store_->chunk_path(oid, snap->chunks.back().chunk_id, 2);
  fs::resize_file(path, fs::file_size(path) / 2);
  open();
  EXPECT_TRUE(unsynced(oid));
  EXPECT_FALSE(unsynced(kept));  // the second block's commit cleared the first's flag
  EXPECT_GE(store_->recover(), 2u);  // the table, then its directory
  EXPECT_EQ(catalog_->find_table("cut"), nullptr);
  EXPECT_FALSE(fs::exists(store_->table_dir(oid)));
  EXPECT_EQ(rows(kept).size(), 5u);
  open();
  EXPECT_EQ(catalog_->find_table("cut"), nullptr);
  EXPECT_EQ(rows(kept).size(), 5u);
  // The name is free again.
  EXPECT_EQ(rows(create_filled("cut", 3)).size(), 3u);
}

TEST_F(OneRoundCommitTest, ADamagedDictionaryRemovesItsTableToo) {
  const uint32_t oid = create_filled("fresh", 6);
  const auto dict = store_->dictionary_path(oid, 1);
  ASSERT_GT(fs::file_size(dict), 4u);
  {
    std::fstream f(dict, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(4);  // the first entry's first byte
    f.put('\x7f');
  }
  open();
  EXPECT_GE(store_->recover(), 1u);
  EXPECT_EQ(catalog_->find_table("fresh"), nullptr);
}

TEST_F(OneRoundCommitTest, BlocksThatChangeTablesTheyDidNotCreateCommitInTwoRounds) {
  const uint32_t oid = make_table();
  uint32_t created = 0;
  {
    storage::WriteTransaction txn(*store_);
    catalog::TableDef def;
    def.name = "fresh";
    def.columns = {{"a", {TypeId::int4}, false}};
    created = txn.create_table(def, false)->def.oid;
    append(oid, 0, 3, true, &txn);
    txn.commit();
  }
  open();
  EXPECT_FALSE(unsynced(created));
  EXPECT_EQ(rows(oid).size(), 3u);
}

TEST_F(TableStoreTest, SecondWriterWaitsForTheBlockAndDeadlocksAreRefused) {
  const uint32_t oid = make_table();
  storage::WriteTransaction txn(*store_);
  append(oid, 0, 3, true, &txn);
  std::atomic<bool> appended{false};
  std::thread writer([&] {
    append(oid, 3, 4);
    appended = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_FALSE(appended.load());  // waits for the block
  txn.commit();
  writer.join();
  EXPECT_EQ(rows(oid).size(), 4u);  // both commits, none lost

  catalog::TableDef def;
  def.name = "u";
  def.columns = {{"id", {TypeId::int4}, true}, {"name", {TypeId::text}, false}, {"x", {TypeId::float8}, false}};
  const uint32_t oid_u = store_->create_table(def)->def.oid;
  storage::WriteTransaction a(*store_), b(*store_);
  a.truncate_table(oid);
  b.truncate_table(oid_u);
  std::thread waiter([&] { a.truncate_table(oid_u); });  // a waits for b
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  try {
    b.truncate_table(oid);  // b would wait for a: a cycle
    FAIL() << "no deadlock reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::object_not_in_prerequisite_state);
  }
  b.rollback();
  waiter.join();
  a.commit();
  EXPECT_TRUE(catalog_->find_table(oid)->chunks.empty());
}


TEST_F(TableStoreTest, WaitForABlocksTableIsCancellable) {
  const uint32_t oid = make_table();
  storage::WriteTransaction txn(*store_);
  append(oid, 0, 3, true, &txn);
  CancelToken cancel;
  std::atomic<bool> cancelled{false};
  std::thread writer([&] {
    try {
      store_->append_grouped(oid, [](storage::TableAppender&) {}, &cancel);
    } catch (const Error& e) {
      cancelled = e.state() == SqlState::query_canceled;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto asked = std::chrono::steady_clock::now();
  cancel.request(CancelReason::user_request);
  writer.join();
  EXPECT_TRUE(cancelled.load());
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::milliseconds(100));
  txn.rollback();
}

// A table whose text column takes all of another's committed dictionary
// (CREATE TABLE AS of a text key) links that file; whichever table writes
// its dictionary next first takes a copy of its own, so neither ever sees
// the other's entries, and a reopen finds both whole.
TEST_F(TableStoreTest, WholeDictionaryOfAnotherTableIsLinkedUntilEitherWrites) {
  const uint32_t a = make_table();
  append(a, 0, 6);  // names n0, n1, n2
  catalog::TableDef def;
  def.name = "copy";
  def.columns = {{"id", {TypeId::int4}, true}, {"name", {TypeId::text}, false}, {"x", {TypeId::float8}, false}};
  const uint32_t b = store_->create_table(def)->def.oid;
  const auto source = store_->dictionary(*catalog_->find_table(a), 1);
  auto copy_rows = [&](std::shared_ptr<const storage::StringDictionary> dictionary) {
    auto app = store_->begin_append(b);
    EXPECT_TRUE(app->adopt_dictionary(1, std::move(dictionary)));
    std::vector<std::vector<uint8_t>> data(3), valid(3);
    data[0].resize(3 * 4);
    data[1].resize(3 * 4);
    data[2].resize(3 * 8);
    for (int32_t r = 0; r < 3; ++r) {
      const int32_t id = 100 + r, code = 2 - r;  // n2, n1, n0 as source codes
      const double x = r;
      std::memcpy(data[0].data() + r * 4, &id, 4);
      std::memcpy(data[1].data() + r * 4, &code, 4);
      std::memcpy(data[2].data() + r * 8, &x, 8);
    }
    app->append_columns(3, data, valid);
    app->commit();
  };
  copy_rows(source);
  const std::string path_a = store_->dictionary_path(a, 1), path_b = store_->dictionary_path(b, 1);
  EXPECT_EQ(fs::hard_link_count(path_a), 2u);
  EXPECT_EQ(catalog_->find_table(b)->dictionaries[1].bytes, catalog_->find_table(a)->dictionaries[1].bytes);
  const std::vector<std::string> copied = {"100|n2|0.000000", "101|n1|1.000000", "102|n0|2.000000"};
  EXPECT_EQ(rows(b), copied);

  // The source appends a new name: its file becomes its own first.
  {
    auto app = store_->begin_append(a);
    *static_cast<int32_t*>(app->value_slot(0)) = 6;
    app->set_text(1, "only in a");
    app->set_null(2);
    app->finish_row();
    app->commit();
  }
  EXPECT_EQ(fs::hard_link_count(path_a), 1u);
  EXPECT_EQ(fs::hard_link_count(path_b), 1u);
  EXPECT_EQ(rows(a).back(), "6|only in a|NULL");
  EXPECT_EQ(rows(b), copied);
  // The copy appends its own name.
  {
    auto more = store_->begin_append(b);
    *static_cast<int32_t*>(more->value_slot(0)) = 103;
    more->set_text(1, "only in copy");
    more->set_null(2);
    more->finish_row();
    more->commit();
  }

  // Linked again (a fresh table from the source's whole dictionary), then the source is dropped.
  def.name = "copy2";
  const uint32_t c = store_->create_table(def)->def.oid;
  {
    auto app2 = store_->begin_append(c);
    const auto whole = store_->dictionary(*catalog_->find_table(a), 1);
    EXPECT_TRUE(app2->adopt_dictionary(1, whole));
    app2->set_null(1);
    *static_cast<int32_t*>(app2->value_slot(0)) = 7;
    app2->set_null(2);
    app2->finish_row();
    app2->commit();
  }
  EXPECT_EQ(fs::hard_link_count(store_->dictionary_path(c, 1)), 2u);
  store_->drop_table(a);
  store_->collect_retired();
  open();
  EXPECT_EQ(store_->recover(), 0u);
  std::vector<std::string> b_rows = copied;
  b_rows.push_back("103|only in copy|NULL");
  EXPECT_EQ(rows(b), b_rows);
  EXPECT_EQ(store_->dictionary(*catalog_->find_table(c), 1)->size(), 4);
  EXPECT_EQ(store_->dictionary(*catalog_->find_table(c), 1)->at(3), "only in a");
}
