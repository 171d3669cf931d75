// When a result's rows reach the client: through the simple and the
// extended protocol, with one and with several encoding threads, the rows
// arrive complete and in order, and a small result leaves in one write with
// its CommandComplete and ReadyForQuery. An error after rows were produced
// is reported as PostgreSQL reports it: the rows, then the ErrorResponse, no
// CommandComplete, and the session goes on.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "protocol/backend_messages.hpp"
#include "protocol/message_buffer.hpp"
#include "protocol/protocol_session.hpp"
#include "tests/executor/column_fixture.hpp"
#include "tests/protocol/client_script.hpp"
#include "tests/protocol/fake_handler.hpp"
#include "tests/protocol/scripted_stream.hpp"
#include "tests/protocol/sql_session_harness.hpp"

namespace tally::protocol {
namespace {

namespace fe = frontend;
namespace be = backend;
using testing::encode_messages;

// One letter per backend message of each write, e.g. {"RSSKZ", "DDD", "DCZ"}.
std::vector<std::string> types_per_write(const testing::ScriptedStream& stream) {
  std::vector<std::string> writes;
  size_t at = 0;
  for (size_t end : stream.write_ends) {
    std::string types;
    MessageReader in(std::string_view(stream.output).substr(at, end - at));
    while (in.remaining() > 0) {
      types.push_back(static_cast<char>(in.byte()));
      in.bytes(static_cast<size_t>(in.int32()) - 4);
    }
    writes.push_back(std::move(types));
    at = end;
  }
  return writes;
}

size_t count_of(const std::string& s, char c) { return static_cast<size_t>(std::count(s.begin(), s.end(), c)); }

// Table t: g = row mod G for G in {1000, 4096, 65536} (columns g1000, g4096,
// g65536), v = row mod 7, 131,072 rows in two chunks.
std::unique_ptr<executor::MemoryTableProvider> grouped_table() {
  std::vector<executor::TableColumn> columns = {
      {"g1000", {TypeId::int4}}, {"g4096", {TypeId::int4}}, {"g65536", {TypeId::int4}}, {"v", {TypeId::int4}}};
  auto table = std::make_shared<executor::MemoryTable>("t", columns);
  constexpr int kChunkRows = 65536;
  for (int chunk = 0; chunk < 2; ++chunk) {
    std::vector<int32_t> g1000, g4096, g65536, v;
    for (int r = chunk * kChunkRows; r < (chunk + 1) * kChunkRows; ++r) {
      g1000.push_back(r % 1000);
      g4096.push_back(r % 4096);
      g65536.push_back(r % 65536);
      v.push_back(r % 7);
    }
    const std::vector<uint8_t> valid(kChunkRows, 1);
    auto batch = std::make_shared<storage::ChunkBatch>();
    batch->rows = kChunkRows;
    batch->columns.push_back(executor::testing::column(TypeId::int4, g1000, valid));
    batch->columns.push_back(executor::testing::column(TypeId::int4, g4096, valid));
    batch->columns.push_back(executor::testing::column(TypeId::int4, g65536, valid));
    batch->columns.push_back(executor::testing::column(TypeId::int4, v, valid));
    table->append(batch);
  }
  auto tables = std::make_unique<executor::MemoryTableProvider>();
  tables->put(table);
  return tables;
}

// Every DataRow of the output must be (g, sum of v over rows r with r mod G = g)
// for g = 0, 1, ..., G - 1 in order; returns how many there were.
size_t check_ordered_sums(const std::string& output, int groups) {
  size_t rows = 0;
  for (const auto& m : be::decode_all(output)) {
    const auto* row = std::get_if<be::DataRow>(&m);
    if (row == nullptr) continue;
    const int g = static_cast<int>(rows);
    int64_t sum = 0;
    for (int r = g; r < 131072; r += groups) sum += r % 7;
    EXPECT_EQ(row->values.at(0).value_or("NULL"), std::to_string(g)) << "row " << rows;
    EXPECT_EQ(row->values.at(1).value_or("NULL"), std::to_string(sum)) << "row " << rows;
    if (row->values.at(0) != std::to_string(g)) break;  // one message is enough
    ++rows;
  }
  return rows;
}

struct Shape {
  int groups;
  bool extended;
};

class ResultFlush : public ::testing::TestWithParam<Shape> {};

TEST_P(ResultFlush, AllRowsArriveInOrder) {
  const Shape shape = GetParam();
  testing::SqlSessionHarness h(grouped_table());
  const std::string col = "g" + std::to_string(shape.groups);
  const std::string sql = "SELECT " + col + ", sum(v) FROM t GROUP BY " + col + " ORDER BY " + col;
  const std::string script =
      shape.extended ? encode_messages({fe::Parse{"", sql, {}}, fe::Bind{"", "", {}, {}, {}}, fe::Describe{'P', ""},
                                        fe::Execute{"", 0}, fe::Sync{}})
                     : encode_messages({fe::Query{sql}});
  const testing::ScriptedStream stream = h.run_raw({script});
  EXPECT_EQ(check_ordered_sums(stream.output, shape.groups), static_cast<size_t>(shape.groups));
  const std::vector<std::string> writes = types_per_write(stream);
  // The writes after the start-up's: the result's.
  std::string all;
  size_t first_rows = 0, first_write = 0;
  for (size_t w = 1; w < writes.size(); ++w) {
    if (first_rows == 0 && count_of(writes[w], 'D') > 0) {
      first_rows = count_of(writes[w], 'D');
      first_write = w;
    }
    all += writes[w];
  }
  ASSERT_GT(first_rows, 0u);
  const std::string head = shape.extended ? "12T" : "T";
  EXPECT_EQ(all, head + std::string(static_cast<size_t>(shape.groups), 'D') + "CZ");
  if (shape.groups < 1024) {
    // A small result: every row, CommandComplete and ReadyForQuery in one write.
    EXPECT_EQ(first_rows, static_cast<size_t>(shape.groups));
    EXPECT_EQ(writes[first_write].substr(writes[first_write].size() - 2), "CZ");
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ResultFlush,
                         ::testing::Values(Shape{1000, false}, Shape{1000, true}, Shape{4096, false},
                                           Shape{4096, true}, Shape{65536, false}, Shape{65536, true}),
                         [](const auto& info) {
                           return std::to_string(info.param.groups) + (info.param.extended ? "_extended" : "_simple");
                         });

// A result below the parallel encoding's size leaves in one write.
TEST(ResultFlush, MidSizedResultLeavesInOneWrite) {
  testing::SqlSessionHarness h(grouped_table());
  const std::string sql = "SELECT g4096, sum(v) FROM t GROUP BY g4096 ORDER BY g4096";
  const testing::ScriptedStream stream = h.run_raw({encode_messages({fe::Query{sql}})});
  EXPECT_EQ(check_ordered_sums(stream.output, 4096), 4096u);
  const std::vector<std::string> writes = types_per_write(stream);
  // Start-up, every row at once (over the channel's 64 KB flush mark), CommandComplete and ReadyForQuery.
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_EQ(writes[1], "T" + std::string(4096, 'D'));
  EXPECT_EQ(writes[2], "CZ");
}

// The server-side timeline of a statement (common/statement_timeline.hpp),
// when the host asks for it: every point stamped, in order, for both
// protocols; the first DataRow left before the statement was done, and
// nothing is kept when the host does not ask.
TEST(StatementTimeline, EveryPointInOrder) {
  using P = StatementTimeline;
  testing::SqlSessionHarness h(grouped_table());
  const std::string sql = "SELECT g4096, sum(v) FROM t GROUP BY g4096";
  h.host.keep_timelines = true;
  h.run_raw({encode_messages({fe::Query{sql}, fe::Parse{"", sql, {}}, fe::Bind{"", "", {}, {}, {}},
                              fe::Execute{"", 0}, fe::Sync{}})});
  ASSERT_EQ(h.host.timelines.size(), 2u);
  for (const StatementTimeline& t : h.host.timelines) {
    double previous = 0;
    for (size_t p = P::executor_start; p < P::point_count; ++p) {
      // Stamped by CREATE TABLE AS only.
      if (p == P::table_created || p == P::rows_written || p == P::files_synced || p == P::committed) continue;
      const double at = t.offset_us(static_cast<P::Point>(p));
      EXPECT_GE(at, previous) << P::names[p];
      previous = at;
    }
    EXPECT_LT(t.at[P::first_data_row], t.at[P::statement_done]);
  }
  h.host.keep_timelines = false;
  h.host.timelines.clear();
  h.run_raw({encode_messages({fe::Query{sql}})});
  EXPECT_TRUE(h.host.timelines.empty());
}

// Rows produced before an error are sent; the error follows them, with no
// CommandComplete, and the session answers the next query (PostgreSQL 15
// answers `SELECT 1/(n-3) FROM generate_series(0,3) n` with T D D D E Z).
TEST(ResultFlushError, ErrorAfterSentRowsSimpleQuery) {
  config::Config config;
  testing::FakeFactory factory;
  testing::FakeHost host;
  testing::ScriptedStream stream(testing::startup_packet("tally", "tally", "test") +
                                 encode_messages({fe::Query{"rowsfail 3"}, fe::Query{"rows 1"}, fe::Terminate{}}));
  ProtocolSession session(config, factory, host, stream);
  session.run();
  const auto writes = types_per_write(stream);
  std::string all;
  for (size_t w = 1; w < writes.size(); ++w) all += writes[w];
  EXPECT_EQ(all, "TDDDEZTDCZ");
  std::vector<std::string> codes;
  for (const auto& m : be::decode_all(stream.output)) {
    if (const auto* e = std::get_if<be::ErrorResponse>(&m)) codes.push_back(e->field('C'));
  }
  EXPECT_EQ(codes, std::vector<std::string>{"22012"});
}

TEST(ResultFlushError, ErrorAfterSentRowsExtendedSkipsToSync) {
  config::Config config;
  testing::FakeFactory factory;
  testing::FakeHost host;
  testing::ScriptedStream stream(
      testing::startup_packet("tally", "tally", "test") +
      encode_messages({fe::Parse{"", "rowsfail 2", {}}, fe::Bind{"", "", {}, {}, {}}, fe::Execute{"", 0},
                       fe::Execute{"", 0}, fe::Sync{}, fe::Query{"rows 1"}, fe::Terminate{}}));
  ProtocolSession session(config, factory, host, stream);
  session.run();
  const auto writes = types_per_write(stream);
  std::string all;
  for (size_t w = 1; w < writes.size(); ++w) all += writes[w];
  // The second Execute is skipped (awaiting Sync), as PostgreSQL does.
  EXPECT_EQ(all, "12DDEZTDCZ");
}

// What a result came from (ResultWriter::release_after_reply: the executor
// hands over its aggregation's engine run) is released right after the
// reply's ReadyForQuery was written, not before the rows: simple and extended.
TEST(ResultFlushRelease, HeldObjectGoesAfterReadyForQuery) {
  config::Config config;
  testing::FakeFactory factory;
  testing::FakeHost host;
  testing::ScriptedStream stream(testing::startup_packet("tally", "tally", "test") +
                                 encode_messages({fe::Query{"held"}, fe::Query{"rows 1"}, fe::Parse{"", "held", {}},
                                                  fe::Bind{"", "", {}, {}, {}}, fe::Execute{"", 0}, fe::Sync{},
                                                  fe::Terminate{}}));
  std::vector<size_t> released_at;  // output bytes written when each was released
  testing::held_released() = [&] { released_at.push_back(stream.output.size()); };
  {
    ProtocolSession session(config, factory, host, stream);
    session.run();
  }
  testing::held_released() = nullptr;
  const auto writes = types_per_write(stream);
  ASSERT_EQ(writes.size(), 4u);
  EXPECT_EQ(writes[1], "CZ");
  EXPECT_EQ(writes[3], "12CZ");
  ASSERT_EQ(released_at.size(), 2u);
  EXPECT_EQ(released_at[0], stream.write_ends[1]);
  EXPECT_EQ(released_at[1], stream.write_ends[3]);
}

}  // namespace
}  // namespace tally::protocol
