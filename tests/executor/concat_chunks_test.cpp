// concat_chunks (executor/operators/chunk_ops.hpp), the held side of a hash
// join put together on several threads, must give the chunk append_vector
// gives chunk by chunk: every value, NULL and type, for the kinds it copies
// as arrays (integers, floats, numerics, texts coded by one dictionary) and
// those it appends (texts of mixed forms, intervals). append_vector taking
// its source (an rvalue) must give what the copy gives.
#include <gtest/gtest.h>

#include <memory>

#include "executor/operators/chunk_ops.hpp"

namespace tally::executor {
namespace {

TEST(ConcatChunks, GivesWhatAppendingChunkByChunkGives) {
  auto dictionary = std::make_shared<storage::StringDictionary>();
  for (const char* s : {"a", "bb", "ccc"}) dictionary->intern(s);
  const std::vector<OutputColumn> columns{{"i", {TypeId::int8}}, {"f", {TypeId::float8}}, {"n", {TypeId::numeric}},
                                          {"coded", {TypeId::text}}, {"mixed", {TypeId::text}},
                                          {"iv", {TypeId::interval}}};
  std::vector<DataChunk> chunks;
  for (int k = 0; k < 7; ++k) {
    DataChunk chunk;
    chunk.rows = static_cast<size_t>(k % 3 == 1 ? 0 : 5 + k);
    for (const auto& c : columns) chunk.columns.emplace_back(c.type);
    for (size_t r = 0; r < chunk.rows; ++r) {
      const bool null = k % 2 == 0 && r % 3 == 0;  // NULLs in some chunks only
      const int64_t v = k * 100 + static_cast<int64_t>(r);
      chunk.columns[0].push(null ? Value{Null{}} : Value{v});
      chunk.columns[1].push(Value{static_cast<double>(v) / 4});
      chunk.columns[2].push(null ? Value{Null{}} : Value{Numeric{v * 7, 2}});
      chunk.columns[4].push(Value{std::string(static_cast<size_t>(r % 4), 'x')});
      chunk.columns[5].push(Value{Interval{static_cast<int32_t>(k), static_cast<int32_t>(r), v}});
    }
    Vector& coded = chunk.columns[3];
    coded.dictionary = dictionary;
    for (size_t r = 0; r < chunk.rows; ++r) coded.codes.push_back(static_cast<int32_t>(r % 3));
    if (k == 3) coded.nulls.assign(chunk.rows, 0), coded.nulls[1] = 1;
    coded.count = chunk.rows;
    if (k == 2) {  // a coded chunk among materialized ones: appended as strings
      Vector& mixed = chunk.columns[4];
      mixed = Vector(SqlType{TypeId::text});
      mixed.dictionary = dictionary;
      mixed.codes.assign(chunk.rows, 2);
      mixed.count = chunk.rows;
    }
    chunks.push_back(std::move(chunk));
  }
  DataChunk want;
  for (const auto& c : columns) want.columns.emplace_back(c.type);
  for (const DataChunk& chunk : chunks) {
    for (size_t c = 0; c < columns.size(); ++c) append_vector(want.columns[c], chunk.columns[c]);
    want.rows += chunk.rows;
  }
  const DataChunk got = concat_chunks(std::move(chunks), columns, 3);
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.columns.size(), columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    ASSERT_EQ(got.columns[c].count, want.rows) << c;
    for (size_t r = 0; r < want.rows; ++r) {
      const Value a = got.columns[c].get(r), b = want.columns[c].get(r);
      ASSERT_EQ(is_null(a), is_null(b)) << c << " " << r;
      if (!is_null(a)) {
        EXPECT_TRUE(values_equal(a, b)) << c << " " << r;
      }
    }
  }
}

// The same column appended by copy and by taking it: equal values, NULLs,
// type and form, into an empty column (where the arrays are taken), one
// with rows, and one coded by another dictionary (both copy).
TEST(AppendVector, TakingGivesWhatCopyingGives) {
  auto dictionary = std::make_shared<storage::StringDictionary>();
  auto other = std::make_shared<storage::StringDictionary>();
  for (const char* s : {"a", "bb", "ccc"}) dictionary->intern(s), other->intern(s);
  auto source = [&](TypeId id) {
    Vector v{SqlType{id}};
    for (int64_t r = 0; r < 6; ++r) {
      if (r == 4) {
        v.push(Value{Null{}});
        continue;
      }
      if (id == TypeId::int8) v.push(Value{r * 3});
      if (id == TypeId::float8) v.push(Value{static_cast<double>(r) / 8});
      if (id == TypeId::numeric) v.push(Value{Numeric{r * 7, 2}});
      if (id == TypeId::interval) v.push(Value{Interval{1, static_cast<int32_t>(r), r}});
    }
    if (id == TypeId::text) {
      v.dictionary = dictionary;
      v.codes = {0, 1, 2, 0, 0, 1};
      v.nulls = {0, 0, 0, 0, 1, 0};
      v.count = 6;
    }
    return v;
  };
  for (const TypeId id : {TypeId::int8, TypeId::float8, TypeId::numeric, TypeId::text, TypeId::interval}) {
    for (int start = 0; start < 3; ++start) {
      if (start == 2 && id != TypeId::text) continue;
      Vector copied{SqlType{id}}, taken{SqlType{id}};
      if (start == 1) append_vector(copied, source(id)), append_vector(taken, source(id));
      if (start == 2) copied.dictionary = taken.dictionary = other;
      const Vector from = source(id);
      append_vector(copied, from);
      append_vector(taken, source(id));
      ASSERT_EQ(taken.count, copied.count) << static_cast<int>(id) << " " << start;
      EXPECT_EQ(taken.type.id, id);
      EXPECT_EQ(taken.coded(), copied.coded());
      EXPECT_EQ(taken.dictionary, copied.dictionary);
      for (size_t r = 0; r < copied.count; ++r) {
        const Value a = taken.get(r), b = copied.get(r);
        ASSERT_EQ(is_null(a), is_null(b)) << static_cast<int>(id) << " " << start << " " << r;
        if (!is_null(a)) {
          EXPECT_TRUE(values_equal(a, b)) << static_cast<int>(id) << " " << start << " " << r;
        }
      }
    }
  }
}

// A streamed count holds its values in an array it shares (shared_ints,
// ints empty): appended, by copy or by taking, its values come along.
TEST(AppendVector, SharedIntegerValuesAreAppended) {
  Vector shared{SqlType{TypeId::int8}};
  shared.shared_ints = std::make_shared<const std::vector<int64_t>>(std::vector<int64_t>{4, 5, 6});
  shared.count = 3;
  for (const bool has_rows : {false, true}) {
    Vector copied{SqlType{TypeId::int8}}, taken{SqlType{TypeId::int8}};
    if (has_rows) copied.push(Value{int64_t{1}}), taken.push(Value{int64_t{1}});
    append_vector(copied, shared);
    append_vector(taken, Vector(shared));
    for (const Vector* v : {&copied, &taken}) {
      ASSERT_EQ(v->count, has_rows ? 4u : 3u);
      for (size_t r = 0; r < 3; ++r) EXPECT_EQ(v->int_data()[r + (has_rows ? 1 : 0)], static_cast<int64_t>(4 + r));
    }
  }
}

}  // namespace
}  // namespace tally::executor
