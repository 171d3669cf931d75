#pragma once
// A catalog and table store in a fresh directory per test, a three-column
// table (int4 id, text name, float8 x) and its rows as strings: the storage
// tests' common ground.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "storage/table_appender.hpp"
#include "storage/table_store.hpp"
#include "storage/write_transaction.hpp"

namespace tally::testing {

namespace fs = std::filesystem;

class TableStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tally_store_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    open();
  }
  void TearDown() override {
    store_.reset();
    catalog_.reset();
    fs::remove_all(dir_);
  }
  // Chunks of chunk_rows rows; part chunks up to inline_chunk_bytes kept in
  // the catalog (none by default: these tests look at the files).
  void open(uint32_t chunk_rows = 4, uint64_t inline_chunk_bytes = 0) {
    store_.reset();
    catalog_.reset();
    catalog_ = std::make_unique<catalog::Catalog>(dir_.string());
    storage::StoreOptions opt;
    opt.chunk_rows = chunk_rows;
    opt.merge_tail_below_rows = 3;
    opt.inline_chunk_bytes = inline_chunk_bytes;
    store_ = std::make_unique<storage::TableStore>(*catalog_, opt);
  }
  uint32_t make_table() {
    catalog::TableDef def;
    def.name = "t";
    def.columns = {{"id", {TypeId::int4}, true}, {"name", {TypeId::text}, false}, {"x", {TypeId::float8}, false}};
    return store_->create_table(def)->def.oid;
  }
  // Appends rows id = from..to-1, name = "n<id % 3>", x NULL for odd ids.
  void append(uint32_t oid, int from, int to, bool commit = true, storage::WriteTransaction* txn = nullptr) {
    auto app = txn ? txn->begin_append(oid) : store_->begin_append(oid);
    for (int i = from; i < to; ++i) {
      *static_cast<int32_t*>(app->value_slot(0)) = i;
      app->set_text(1, "n" + std::to_string(i % 3));
      if (i % 2) app->set_null(2);
      else *static_cast<double*>(app->value_slot(2)) = i * 0.5;
      app->finish_row();
    }
    if (commit) app->commit();
  }
  // All rows of the table as "id|name|x" strings.
  std::vector<std::string> rows(uint32_t oid) { return rows(*catalog_->find_table(oid)); }
  std::vector<std::string> rows(const catalog::TableSnapshot& snapshot) {
    const auto* snap = &snapshot;
    std::vector<std::string> out;
    const int cols[] = {0, 1, 2};
    for (size_t c = 0; c < snap->chunks.size(); ++c) {
      auto b = store_->read_chunk(*snap, c, cols);
      for (size_t r = 0; r < b->rows; ++r) {
        std::string s = std::to_string(b->columns[0].values<int32_t>()[r]) + "|" +
                        std::string(b->columns[1].dictionary->at(b->columns[1].values<int32_t>()[r])) + "|" +
                        (b->columns[2].is_null(r) ? "NULL" : std::to_string(b->columns[2].values<double>()[r]));
        out.push_back(s);
      }
    }
    return out;
  }

  fs::path dir_;
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<storage::TableStore> store_;
};

}  // namespace tally::testing
