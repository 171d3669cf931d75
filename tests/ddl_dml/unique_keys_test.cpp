// Unique keys enforced through storage's append check
// (executor/dml/unique_keys.hpp) and sequences written ahead
// (catalog/sequence_store.hpp), at the layers below SQL: every append path
// (a plain append, group commit, a transaction block, a rewrite), the set
// handed from one committed append to the next, and a restart.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <string>

#include "catalog/catalog.hpp"
#include "catalog/sequence_store.hpp"
#include "common/error.hpp"
#include "executor/dml/key_value_set.hpp"
#include "executor/dml/unique_keys.hpp"
#include "storage/table_appender.hpp"
#include "storage/table_store.hpp"
#include "storage/write_transaction.hpp"

namespace tally {
namespace {

struct Dir {
  std::string path;
  Dir() {
    char t[] = "/tmp/tally-unique-keys-XXXXXX";
    path = mkdtemp(t);
  }
  ~Dir() { std::filesystem::remove_all(path); }
};

void row(storage::TableAppender& a, int32_t id, const char* v) {
  std::memcpy(a.value_slot(0), &id, sizeof id);
  if (v) {
    a.set_text(1, v);
  } else {
    a.set_null(1);
  }
  a.finish_row();
}

// The detail of the 23505 that f throws ("" when it throws none).
template <class F>
std::string violation(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.state(), SqlState::unique_violation) << e.what();
    return e.detail();
  }
  return "";
}

TEST(UniqueKeys, EveryAppendPathIsChecked) {
  Dir dir;
  catalog::Catalog cat(dir.path);
  storage::StoreOptions options;
  options.chunk_rows = 1000;  // several chunks, and a small tail to merge
  storage::TableStore store(cat, options);
  executor::dml::install_unique_key_checks(store);
  catalog::TableDef t;
  t.name = "t";
  t.columns.push_back({"id", SqlType{TypeId::int4}, true, "", 0});
  t.columns.push_back({"v", SqlType{TypeId::text}, false, "", 0});
  catalog::KeyConstraint pk;
  pk.name = "t_pkey";
  pk.primary = true;
  pk.columns = {0};
  catalog::KeyConstraint uk;
  uk.name = "t_v_key";
  uk.columns = {1};
  t.keys = {pk, uk};
  const uint32_t oid = store.create_table(t)->def.oid;
  {
    auto a = store.begin_append(oid);
    for (int i = 0; i < 2500; ++i) row(*a, i, i % 2 ? nullptr : ("v" + std::to_string(i)).c_str());
    a->commit();
  }
  EXPECT_EQ(violation([&] {
              auto a = store.begin_append(oid);
              row(*a, 7, "new");
              a->commit();
            }),
            "Key (id)=(7) already exists.");
  EXPECT_EQ(violation([&] {
              auto a = store.begin_append(oid);
              row(*a, 9000, "v10");
              a->commit();
            }),
            "Key (v)=(v10) already exists.");
  EXPECT_EQ(violation([&] {
              auto a = store.begin_append(oid);
              row(*a, 9001, "x");
              row(*a, 9001, "y");
              a->commit();
            }),
            "Key (id)=(9001) already exists.");
  for (int i = 0; i < 5; ++i) store.append_grouped(oid, [&](storage::TableAppender& a) { row(a, 10000 + i, nullptr); });
  EXPECT_EQ(violation([&] { store.append_grouped(oid, [&](storage::TableAppender& a) { row(a, 10003, nullptr); }); }),
            "Key (id)=(10003) already exists.");
  EXPECT_EQ(cat.find_table(oid)->row_count(), 2505u);
  {
    storage::WriteTransaction tx(store);
    auto first = tx.begin_append(oid);
    row(*first, 30000, "blk");
    first->commit();
    EXPECT_EQ(violation([&] {
                auto a = tx.begin_append(oid);
                row(*a, 30000, "blk2");
                a->commit();
              }),
              "Key (id)=(30000) already exists.");
    tx.rollback();
  }
  // The rolled-back key is free again.
  store.append_grouped(oid, [&](storage::TableAppender& a) { row(a, 30000, "blk"); });
  // A rewrite (UPDATE) checks its rows among themselves only.
  EXPECT_EQ(violation([&] {
              auto a = store.begin_append(oid);
              a->replace_all_chunks();
              row(*a, 1, "a");
              row(*a, 1, "b");
              a->commit();
            }),
            "Key (id)=(1) already exists.");
  {
    auto a = store.begin_append(oid);
    a->replace_all_chunks();
    row(*a, 1, "a");
    row(*a, 2, "b");
    a->commit();
  }
  EXPECT_EQ(cat.find_table(oid)->row_count(), 2u);
  EXPECT_EQ(violation([&] { store.append_grouped(oid, [&](storage::TableAppender& a) { row(a, 2, nullptr); }); }),
            "Key (id)=(2) already exists.");
  store.append_grouped(oid, [&](storage::TableAppender& a) { row(a, 7, nullptr); });
}

// The set one key's values go into, against std::set: 4-, 8-, 12- and
// 16-byte values (the flat table, through several growths from a small
// start), the one 16-byte value that marks an empty slot, and 20-byte values
// (the fallback).
TEST(UniqueKeys, KeyValueSetAgreesWithAnOrderedSet) {
  std::mt19937_64 random(7);
  for (const size_t width : {4, 8, 12, 16, 20}) {
    executor::dml::KeyValueSet set(width == 8 ? 100000 : 0);
    std::set<std::string> expected;
    for (int i = 0; i < 200000; ++i) {
      std::string value(width, '\0');
      // Few distinct values in the low bytes: duplicates are common.
      const uint64_t bits = random() % 50000;
      std::memcpy(value.data() + width - 4, &bits, 4);
      if (i % 1000 == 0) value.assign(width, '\xff');
      EXPECT_EQ(set.insert(value), expected.insert(value).second) << "width " << width << " value " << i;
    }
    EXPECT_FALSE(set.insert(std::string(width, '\xff')));
  }
}

TEST(Sequences, RestartContinuesPastEveryValueHandedOut) {
  Dir dir;
  int64_t last = 0;
  uint32_t oid = 0;
  {
    catalog::Catalog cat(dir.path);
    catalog::SequenceStore sequences(cat);
    catalog::SequenceDef def;
    def.name = "s";
    oid = sequences.create(def).oid;
    for (int i = 0; i < 40; ++i) last = sequences.next(oid);
    EXPECT_EQ(last, 40);
    catalog::SequenceDef limited;
    limited.name = "limited";
    limited.max = 2;
    const uint32_t l = sequences.create(limited).oid;
    sequences.next(l);
    sequences.next(l);
    try {
      sequences.next(l);
      ADD_FAILURE() << "no 2200H at the limit";
    } catch (const Error& e) {
      EXPECT_EQ(e.state(), SqlState::sequence_generator_limit_exceeded);
      EXPECT_STREQ(e.what(), "nextval: reached maximum value of sequence \"limited\" (2)");
    }
  }
  catalog::Catalog cat(dir.path);
  catalog::SequenceStore sequences(cat);
  EXPECT_GT(sequences.next(oid), last);
  // A table created after the restart does not take a sequence's oid.
  catalog::TableDef t;
  t.name = "t";
  t.columns.push_back({"a", SqlType{TypeId::int4}, false, "", 0});
  const uint32_t table = cat.create_table(t)->def.oid;
  for (const auto& s : sequences.list()) EXPECT_NE(s.oid, table);
}

}  // namespace
}  // namespace tally
