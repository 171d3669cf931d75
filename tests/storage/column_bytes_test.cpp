// ColumnBytes: frozen bytes are shared by copies, and a change through any
// copy makes that copy's bytes its own, never seen by the others; the
// table store's cached chunks are frozen, so a projection of one shares it.
#include <gtest/gtest.h>

#include <filesystem>

#include "catalog/catalog.hpp"
#include "storage/column_bytes.hpp"
#include "storage/table_appender.hpp"
#include "storage/table_store.hpp"

using namespace tally;
namespace fs = std::filesystem;

namespace {

TEST(ColumnBytes, CopiesOfFrozenBytesShareThemUntilChanged) {
  storage::ColumnBytes a(std::vector<uint8_t>{1, 2, 3});
  storage::ColumnBytes own_copy = a;  // not frozen: a copy of its own
  EXPECT_NE(static_cast<const storage::ColumnBytes&>(own_copy).data(),
            static_cast<const storage::ColumnBytes&>(a).data());
  a.freeze();
  EXPECT_TRUE(a.frozen());
  const storage::ColumnBytes b = a;
  EXPECT_EQ(b.data(), static_cast<const storage::ColumnBytes&>(a).data());
  EXPECT_EQ(b, (std::vector<uint8_t>{1, 2, 3}));
  storage::ColumnBytes c = a;
  c[1] = 9;  // a change: c's own bytes from here on
  EXPECT_FALSE(c.frozen());
  EXPECT_EQ(c, (std::vector<uint8_t>{1, 9, 3}));
  EXPECT_EQ(a, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(b, (std::vector<uint8_t>{1, 2, 3}));
  storage::ColumnBytes d = b;
  d.resize(5, 7);
  EXPECT_EQ(d, (std::vector<uint8_t>{1, 2, 3, 7, 7}));
  EXPECT_EQ(b.size(), 3u);
  storage::ColumnBytes e = b;
  e.assign(2, 4);
  EXPECT_EQ(e, (std::vector<uint8_t>{4, 4}));
  EXPECT_EQ(a, b);
  storage::ColumnBytes moved = std::move(e);
  EXPECT_EQ(moved, (std::vector<uint8_t>{4, 4}));
  storage::ColumnBytes empty;
  empty.freeze();
  EXPECT_TRUE(empty.empty());
  empty.push_back(1);
  EXPECT_EQ(empty, (std::vector<uint8_t>{1}));
}

TEST(ColumnBytes, AProjectionOfACachedChunkSharesItsColumns) {
  const fs::path dir = fs::temp_directory_path() / ("tally_column_bytes_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    catalog::Catalog catalog(dir.string());
    storage::StoreOptions options;
    options.chunk_rows = 8;
    storage::TableStore store(catalog, options);
    catalog::TableDef def;
    def.name = "t";
    def.columns = {{"a", {TypeId::int4}, false}, {"b", {TypeId::int8}, false}};
    const uint32_t oid = store.create_table(def)->def.oid;
    auto app = store.begin_append(oid);
    for (int i = 0; i < 8; ++i) {
      *static_cast<int32_t*>(app->value_slot(0)) = i;
      if (i % 3 == 0) app->set_null(1);
      else *static_cast<int64_t*>(app->value_slot(1)) = int64_t{1} << (40 + i);
      app->finish_row();
    }
    app->commit();
    const auto snap = catalog.find_table(oid);
    const int both[] = {0, 1};
    const int second[] = {1};
    const auto whole = store.read_chunk(*snap, 0, both);
    const auto projected = store.read_chunk(*snap, 0, second);
    ASSERT_EQ(projected->columns.size(), 1u);
    EXPECT_EQ(projected->columns[0].data.data(), whole->columns[1].data.data());
    EXPECT_EQ(projected->columns[0].validity.data(), whole->columns[1].validity.data());
    // A caller's copy it changes is its own: the cache's chunk stays as read.
    storage::ColumnVector mine = projected->columns[0];
    mine.mutable_values<int64_t>()[1] = -1;
    mine.validity[0] = 1;
    EXPECT_EQ(whole->columns[1].values<int64_t>()[1], int64_t{1} << 41);
    EXPECT_TRUE(whole->columns[1].is_null(0));
    EXPECT_EQ(store.read_chunk(*snap, 0, second)->columns[0].values<int64_t>()[1], int64_t{1} << 41);
  }
  fs::remove_all(dir);
}

}  // namespace
