// concat_chunks (executor/operators/chunk_ops.hpp), the held side of a hash
// join put together on several threads, must give the chunk append_vector
// gives chunk by chunk: every value, NULL and type, for the kinds it copies
// as arrays (integers, floats, numerics, texts coded by one dictionary) and
// those it appends (texts of mixed forms, intervals).
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
      if (!is_null(a)) EXPECT_TRUE(values_equal(a, b)) << c << " " << r;
    }
  }
}

}  // namespace
}  // namespace tally::executor
