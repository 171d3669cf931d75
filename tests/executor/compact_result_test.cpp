// The CPU engine's compact result form (AggregationSpec::compact_result:
// aggregates that count every row of their group share one count array,
// int64 sums stay int64) finalized with finalize_compact_column must give the
// columns the full form gives through finalize_column, for every variant, one
// and two threads, NULL keys, a NULL-able input (its groups without input are
// NULL), FILTER masks, and a group whose every input is NULL. It also checks
// which counts are shared: a shared count that should not be (a FILTER or a
// NULL input counts fewer rows) would change the answers above.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "common/aggregate_engine.hpp"
#include "executor/finalize.hpp"
#include "executor/result_set.hpp"
#include "executor/value_codec.hpp"
#include "tests/executor/recording_writer.hpp"
#include "executor/cpu/cpu_engine.hpp"

namespace tally::executor {
namespace {

struct Chunk {
  std::vector<int64_t> keys;
  std::vector<uint8_t> key_valid;
  std::vector<int32_t> dense_values;  // no NULLs
  std::vector<int32_t> sparse_values;
  std::vector<uint8_t> sparse_valid;
  std::vector<uint8_t> filter;
};

// Key ranges: 3,000 (dense-radix builds its state array while the rows come
// in) and 300,000, ten times the rows (dense-radix keeps the rows until
// finalize: its deferred path, where counts another aggregate keeps are not
// updated).
constexpr int64_t kKeyMin = -50;

std::vector<Chunk> make_chunks(int64_t key_range) {
  std::mt19937_64 rng(7);
  std::vector<Chunk> chunks(3);
  for (auto& c : chunks) {
    for (size_t r = 0; r < 30000; ++r) {
      const bool null_key = rng() % 40 == 0;
      const int64_t key = r % 500 == 0 ? 7 : kKeyMin + static_cast<int64_t>(rng() % static_cast<uint64_t>(key_range));
      c.keys.push_back(null_key ? 0 : key);
      c.key_valid.push_back(null_key ? 0 : 1);
      // Negative and positive values, with int32's limits now and then.
      const uint64_t pick = rng() % 1000;
      c.dense_values.push_back(pick == 0 ? INT32_MIN : pick == 1 ? INT32_MAX
                                                                 : static_cast<int32_t>(static_cast<int64_t>(rng() % 20001) - 10000));
      // Key 7's inputs are all NULL: its sum/min over them are NULL.
      const bool null_value = key == 7 || rng() % 5 == 0;
      c.sparse_values.push_back(static_cast<int32_t>(rng() % 1000) - 500);
      c.sparse_valid.push_back(null_value ? 0 : 1);
      c.filter.push_back(rng() % 4 == 0 ? 1 : 0);
    }
  }
  return chunks;
}

// The query's aggregates: count(*), sum/min/max/avg(dense), count/sum(sparse),
// min(dense) FILTER, count(*) FILTER.
const std::vector<PartialAggregate> kAggregates = {
    {PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1},  {PartialOp::min_int, 0, -1},
    {PartialOp::max_int, 0, -1},     {PartialOp::sum_int, 0, -1},  {PartialOp::count_valid, 1, -1},
    {PartialOp::sum_int, 1, -1},     {PartialOp::min_int, 0, -1},  {PartialOp::count_rows, -1, -1}};
const std::vector<ColumnFinal> kFinals = {
    {AggKind::count_star, TypeId::unknown, 0}, {AggKind::sum, TypeId::int4, 0}, {AggKind::min, TypeId::int4, 0},
    {AggKind::max, TypeId::int4, 0},           {AggKind::avg, TypeId::int4, 0}, {AggKind::count, TypeId::int4, 0},
    {AggKind::sum, TypeId::int4, 0},           {AggKind::min, TypeId::int4, 0}, {AggKind::count_star, TypeId::unknown, 0}};
const std::vector<TypeId> kOutputTypes = {TypeId::int8, TypeId::int8, TypeId::int4, TypeId::int4, TypeId::numeric,
                                          TypeId::int8, TypeId::int8, TypeId::int4, TypeId::int8};

std::string last_configuration;  // of the last run_engine call (EXPLAIN's configuration text)

AggregationResult run_engine(const std::vector<Chunk>& chunks, int64_t key_range, const std::string& variant, int threads,
                             bool compact) {
  AggregationSpec spec;
  spec.key_width = ColumnWidth::int64;
  spec.key_range_known = true;
  spec.key_min = kKeyMin;
  spec.key_max = kKeyMin + key_range - 1;
  spec.estimated_groups = static_cast<uint64_t>(std::min<int64_t>(key_range, 90000));
  spec.threads = threads;
  spec.forced_variant = variant;
  spec.aggregates = kAggregates;
  spec.value_widths = {ColumnWidth::int32, ColumnWidth::int32};
  spec.compact_result = compact;
  auto run = make_cpu_engine()->start(spec);
  for (const Chunk& c : chunks) {
    ChunkInput in;
    in.rows = c.keys.size();
    in.keys = {ColumnWidth::int64, c.keys.data(), c.key_valid.data(), {}};
    in.values = {{ColumnWidth::int32, c.dense_values.data(), nullptr, {}},
                 {ColumnWidth::int32, c.sparse_values.data(), c.sparse_valid.data(), {}}};
    in.filters = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, c.filter.data(), c.filter.data()};
    run->sink(in);
  }
  AggregationResult result = run->finalize();
  last_configuration = run->report().configuration;
  return result;
}

// Each group's row as text ("NULL" for NULL), keyed by its key (nullopt: the NULL-key group).
std::map<std::optional<int64_t>, std::vector<std::string>> rows_of(AggregationResult& result, bool compact) {
  const size_t groups = result.groups();
  std::vector<Vector> columns;
  for (size_t a = 0; a < kAggregates.size(); ++a) {
    Vector v{SqlType{kOutputTypes[a]}};
    if (!compact) {
      finalize_column(kFinals[a], result.states[a], groups, v);
    } else {
      const int source = result.count_source[a];
      bool read_later = false;
      for (size_t b = a + 1; b < kAggregates.size(); ++b) read_later |= result.count_source[b] == source;
      finalize_compact_column(kFinals[a], result.states[a], result.states[static_cast<size_t>(source)].count,
                              !read_later, groups, v);
    }
    EXPECT_EQ(v.size(), groups) << "aggregate " << a;
    columns.push_back(std::move(v));
  }
  std::map<std::optional<int64_t>, std::vector<std::string>> rows;
  for (size_t g = 0; g < groups; ++g) {
    std::vector<std::string> row;
    for (const Vector& v : columns) {
      std::string text;
      if (v.null_at(g)) text = "NULL";
      else append_text(text, v, g);
      row.push_back(std::move(text));
    }
    const auto key = result.key_valid[g] ? std::optional<int64_t>(result.keys[g]) : std::nullopt;
    EXPECT_TRUE(rows.emplace(key, std::move(row)).second) << "group twice";
  }
  return rows;
}

class CompactResultTest : public ::testing::TestWithParam<std::tuple<std::string, int, int64_t>> {};

TEST_P(CompactResultTest, SameColumnsAsTheFullForm) {
  const auto [variant, threads, key_range] = GetParam();
  const std::vector<Chunk> chunks = make_chunks(key_range);
  AggregationResult full = run_engine(chunks, key_range, variant, threads, false);
  AggregationResult compact = run_engine(chunks, key_range, variant, threads, true);
  if (variant == "dense-radix") {
    EXPECT_EQ(last_configuration.find("aggregated at finalize") != std::string::npos, key_range > 100000)
        << "the deferred path is tested at the large range only: " << last_configuration;
  }
  EXPECT_TRUE(full.count_source.empty());
  // count(*) and the NULL-free input's sum/min/max/avg count the same rows;
  // the NULL-able input and the FILTERed aggregates count their own.
  ASSERT_EQ(compact.count_source, (std::vector<int>{0, 0, 0, 0, 0, 5, 6, 7, 8}));
  for (size_t a = 1; a <= 4; ++a) EXPECT_TRUE(compact.states[a].count.empty()) << "aggregate " << a;
  // int32 inputs: the sums stay int64.
  for (size_t a : {1, 4, 6}) {
    EXPECT_EQ(compact.states[a].sum_int64.size(), compact.groups()) << "aggregate " << a;
    EXPECT_TRUE(compact.states[a].sum_int.empty()) << "aggregate " << a;
  }
  const auto expected = rows_of(full, false);
  const auto got = rows_of(compact, true);
  ASSERT_EQ(got.size(), expected.size());
  ASSERT_TRUE(expected.count(std::nullopt)) << "the data has a NULL-key group";
  ASSERT_EQ(expected.at(7)[6], "NULL") << "key 7's sum over only NULL inputs";
  for (const auto& [key, row] : expected) {
    ASSERT_TRUE(got.count(key));
    EXPECT_EQ(got.at(key), row) << "key " << (key ? std::to_string(*key) : "NULL");
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, CompactResultTest,
                         ::testing::Combine(::testing::Values("dense", "hash", "dense-radix", "hash-radix"),
                                            ::testing::Values(1, 2), ::testing::Values(int64_t{3000}, int64_t{300000})),
                         [](const auto& info) {
                           std::string name = std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) +
                                              "_range" + std::to_string(std::get<2>(info.param));
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// count(*), sum, min, max, avg of a NOT NULL int4 column (every aggregate
// counts its group's rows, one shared count) over a key range ten times the
// rows: dense-radix keeps the rows and aggregates each partition straight
// into its slice of the result arrays, then squeezes out the empty slots
// (emit_deferred_direct). Every group's states must be the full form's
// (aggregated in a scratch state and copied), the NULL-key group included,
// for one and two threads and a range that ends mid-partition.
TEST(CompactResult, DeferredDenseRadixIntoTheResultMatchesTheFullForm) {
  for (const int threads : {1, 2})
  for (const int64_t key_range : {int64_t{300000}, int64_t{300000 + 4097}}) {
    const std::vector<Chunk> chunks = make_chunks(key_range);
    auto run_one = [&](bool compact) {
      AggregationSpec spec;
      spec.key_width = ColumnWidth::int64;
      spec.key_range_known = true;
      spec.key_min = kKeyMin;
      spec.key_max = kKeyMin + key_range - 1;
      spec.estimated_groups = 90000;
      spec.threads = threads;
      spec.forced_variant = "dense-radix";
      spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}, {PartialOp::min_int, 0, -1},
                         {PartialOp::max_int, 0, -1}, {PartialOp::sum_int, 0, -1}};
      spec.value_widths = {ColumnWidth::int32};
      spec.compact_result = compact;
      auto run = make_cpu_engine()->start(spec);
      for (const Chunk& c : chunks) {
        ChunkInput in;
        in.rows = c.keys.size();
        in.keys = {ColumnWidth::int64, c.keys.data(), c.key_valid.data(), {}};
        in.values = {{ColumnWidth::int32, c.dense_values.data(), nullptr, {}}};
        run->sink(in);
      }
      AggregationResult result = run->finalize();
      return std::make_pair(std::move(result), run->report().configuration);
    };
    auto [full, full_configuration] = run_one(false);
    auto [compact, configuration] = run_one(true);
    EXPECT_NE(configuration.find("aggregated at finalize into the result"), std::string::npos) << configuration;
    EXPECT_EQ(full_configuration.find("into the result"), std::string::npos) << full_configuration;
    ASSERT_EQ(compact.count_source, (std::vector<int>{0, 0, 0, 0, 0}));
    ASSERT_EQ(compact.groups(), full.groups());
    ASSERT_LT(full.groups(), static_cast<size_t>(key_range) / 2) << "most slots are empty: compaction is tested";
    // Both forms list the groups in slot order (the NULL key last).
    size_t null_groups = 0;
    for (size_t g = 0; g < full.groups(); ++g) {
      ASSERT_EQ(compact.key_valid[g], full.key_valid[g]) << g;
      null_groups += full.key_valid[g] == 0;
      if (full.key_valid[g]) {
        ASSERT_EQ(compact.keys[g], full.keys[g]) << g;
      }
      ASSERT_EQ(compact.states[0].count[g], full.states[0].count[g]) << g;
      for (size_t a : {size_t{1}, size_t{4}}) ASSERT_TRUE(__int128{compact.states[a].sum_int64[g]} == full.states[a].sum_int[g]) << g;
      ASSERT_EQ(compact.states[2].extreme_int[g], full.states[2].extreme_int[g]) << g;
      ASSERT_EQ(compact.states[3].extreme_int[g], full.states[3].extreme_int[g]) << g;
    }
    EXPECT_EQ(null_groups, 1u);
    EXPECT_EQ(full.key_valid.back(), 0) << "the NULL key comes last";
  }
}

// A sum over more rows than int64 sums are safe for is widened by the engine
// (state_set.hpp: kNarrowSumRowLimit); an int64 input widens at once: the
// compact form then has int128 sums, and sum(int8) is numeric.
TEST(CompactResult, WideInputKeepsInt128Sums) {
  AggregationSpec spec;
  spec.key_range_known = true;
  spec.key_min = 0;
  spec.key_max = 1;
  spec.estimated_groups = 2;
  spec.threads = 2;
  spec.aggregates = {{PartialOp::count_rows, -1, -1}, {PartialOp::sum_int, 0, -1}};
  spec.compact_result = true;
  auto run = make_cpu_engine()->start(spec);
  std::vector<int64_t> keys = {0, 1, 0, 1};
  std::vector<int64_t> values = {INT64_MAX, INT64_MIN, INT64_MAX, -5};
  ChunkInput in;
  in.rows = keys.size();
  in.keys = {ColumnWidth::int64, keys.data(), nullptr, {}};
  in.values = {{ColumnWidth::int64, values.data(), nullptr, {}}};
  run->sink(in);
  AggregationResult result = run->finalize();
  ASSERT_EQ(result.groups(), 2u);
  EXPECT_TRUE(result.states[1].sum_int64.empty());
  ASSERT_EQ(result.count_source, (std::vector<int>{0, 0}));
  Vector sums{SqlType{TypeId::numeric}};
  finalize_compact_column({AggKind::sum, TypeId::int8, 0}, result.states[1], result.states[0].count, false, 2, sums);
  std::map<int64_t, std::string> text;
  for (size_t g = 0; g < 2; ++g) {
    std::string s;
    append_text(s, sums, g);
    text[result.keys[g]] = s;
  }
  EXPECT_EQ(text[0], "18446744073709551614");
  EXPECT_EQ(text[1], "-9223372036854775813");
}

// avg(int4) left as its sums and counts (defer_avg: AvgParts, the streaming
// path's form) must stream the fields the Numeric column of the full form
// streams, text and binary, for a shared count (every group counted) and a
// NULL-able input's own count (key 7's group has no input: NULL), sent in
// portal-sized pieces that end mid-result.
class DeferredAvgTest : public ::testing::TestWithParam<tally::Format> {};

ResultSet keys_and_avgs(AggregationResult& r, bool compact) {
  ResultSet result;
  const size_t groups = r.groups();
  Vector keys{SqlType{TypeId::int8}};
  for (size_t g = 0; g < groups; ++g) keys.push(r.key_valid[g] ? Value{r.keys[g]} : Value{Null{}});
  result.columns.push_back(std::move(keys));
  const ColumnFinal avg{AggKind::avg, TypeId::int4, 0};
  for (size_t a : {size_t{4}, size_t{6}}) {  // avg(dense), and avg(sparse) over sum(sparse)'s states
    Vector v{SqlType{TypeId::numeric}};
    if (!compact) {
      finalize_column(avg, r.states[a], groups, v);
    } else {
      const size_t source = static_cast<size_t>(r.count_source[a == 6 ? 5 : a]);
      finalize_compact_column(avg, r.states[a], r.states[source].count, false, groups, v, std::nullopt, true);
      EXPECT_NE(v.avg_parts, nullptr) << "aggregate " << a << " was materialized";
      EXPECT_TRUE(v.numerics.empty());
    }
    result.columns.push_back(std::move(v));
  }
  result.rows = groups;
  return result;
}

TEST_P(DeferredAvgTest, StreamsTheFieldsOfTheNumericColumn) {
  const std::vector<Chunk> chunks = make_chunks(300000);
  AggregationResult full = run_engine(chunks, 300000, "hash", 2, false);
  AggregationResult compact = run_engine(chunks, 300000, "hash", 2, true);
  const ResultSet expected = keys_and_avgs(full, false);
  const ResultSet got = keys_and_avgs(compact, true);
  const std::vector<tally::Format> formats(3, GetParam());
  testing::RecordingWriter whole, pieces;
  whole.row_description(expected.fields);
  size_t position = 0;
  EXPECT_EQ(stream_rows(expected, formats, position, 0, whole), expected.rows);
  pieces.row_description(got.fields);
  position = 0;
  size_t sent = 0;
  while (const size_t n = stream_rows(got, formats, position, 7001, pieces)) sent += n;
  ASSERT_EQ(sent, got.rows);
  // Group order differs between the two runs: compare by key field.
  std::map<std::optional<std::string>, std::vector<std::optional<std::string>>> want, have;
  for (const auto& row : whole.results.at(0).rows) want[row[0]] = row;
  for (const auto& row : pieces.results.at(0).rows) have[row[0]] = row;
  ASSERT_EQ(have.size(), want.size());
  size_t nulls = 0;
  for (const auto& [key, row] : want) {
    ASSERT_TRUE(have.count(key));
    EXPECT_EQ(have.at(key), row);
    nulls += !row[2].has_value();
  }
  // Key 7's inputs and many one-row groups' are all NULL; most groups have input.
  EXPECT_GT(nulls, 0u);
  EXPECT_LT(nulls, want.size() / 2);
  // Readers that go through Vector::get / value_codec see the same values.
  for (size_t g = 0; g < got.rows; g += 997) {
    if (got.columns[1].null_at(g)) continue;
    std::string via_codec;
    append_text(via_codec, got.columns[1], g);
    EXPECT_EQ(std::get<Numeric>(got.columns[1].get(g)).to_string(), via_codec);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, DeferredAvgTest, ::testing::Values(tally::Format::text, tally::Format::binary),
                         [](const auto& info) { return info.param == tally::Format::text ? "text" : "binary"; });

}  // namespace
}  // namespace tally::executor
