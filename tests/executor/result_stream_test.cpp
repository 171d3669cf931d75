// stream_rows: the DataRow encoder that writes straight into the writer's
// buffer must produce, field for field, what value_codec's append_text /
// append_binary produce, for every type, both formats, NULLs, row limits
// (portal resumption) and results larger than one append batch; writers
// without a buffer get the same fields through data_row().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "executor/cpu/worker_pool.hpp"
#include "executor/result_set.hpp"
#include "executor/value_codec.hpp"
#include "tests/executor/recording_writer.hpp"
#include "protocol/discarding_result_writer.hpp"

namespace tally::executor {
namespace {

// A writer that offers its buffer, as the wire writer does, and decodes the
// framed DataRow messages back into fields (checking the framing).
class BufferWriter final : public protocol::DiscardingResultWriter {
 public:
  std::vector<std::vector<std::optional<std::string>>> rows;
  int appended_calls = 0;

  std::string* data_row_buffer() override { return &buffer_; }
  void data_rows_appended() override {
    ++appended_calls;
    drain();
  }
  void data_row(std::span<const std::optional<std::string_view>>) override { ADD_FAILURE() << "data_row called"; }

 private:
  static uint32_t be32(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return __builtin_bswap32(v);
  }
  void drain() {
    size_t at = 0;
    while (at < buffer_.size()) {
      ASSERT_EQ(buffer_[at], 'D');
      const uint32_t length = be32(buffer_.data() + at + 1);
      const char* p = buffer_.data() + at + 5;
      const char* end = buffer_.data() + at + 1 + length;
      ASSERT_LE(static_cast<size_t>(end - buffer_.data()), buffer_.size());
      const int fields = (static_cast<uint8_t>(p[0]) << 8) | static_cast<uint8_t>(p[1]);
      p += 2;
      std::vector<std::optional<std::string>> row;
      for (int f = 0; f < fields; ++f) {
        const uint32_t len = be32(p);
        p += 4;
        if (len == UINT32_MAX) {
          row.emplace_back(std::nullopt);
        } else {
          row.emplace_back(std::string(p, len));
          p += len;
        }
      }
      ASSERT_EQ(p, end) << "DataRow length word does not match its fields";
      rows.push_back(std::move(row));
      at += 1 + length;
    }
    buffer_.clear();
  }
  std::string buffer_;
};

ResultSet make_result(size_t rows) {
  ResultSet result;
  const std::vector<SqlType> types = {SqlType{TypeId::int2},    SqlType{TypeId::int4},  SqlType{TypeId::int8},
                                      SqlType{TypeId::boolean}, SqlType{TypeId::float4}, SqlType{TypeId::float8},
                                      SqlType{TypeId::text},    SqlType{TypeId::date},   SqlType{TypeId::numeric}};
  for (const SqlType& t : types) {
    Vector v(t);
    for (size_t r = 0; r < rows; ++r) {
      const auto i = static_cast<int64_t>(r);
      if (r % 7 == 3) { v.push(Null{}); continue; }
      switch (t.id) {
        case TypeId::int2: v.push(Value{(i * 37) % 65536 - 32768}); break;
        case TypeId::int4: v.push(Value{i % 2 ? INT32_MIN + i : INT32_MAX - i}); break;
        case TypeId::int8: v.push(Value{i % 2 ? INT64_MIN + i : INT64_MAX - i * 1000003}); break;
        case TypeId::boolean: v.push(Value{r % 3 == 0}); break;
        case TypeId::float4: v.push(Value{static_cast<double>(static_cast<float>(i) / 3.0f)}); break;
        case TypeId::float8: v.push(Value{r % 11 == 0 ? -0.0 : static_cast<double>(i) * 1e300 / 7e299}); break;
        case TypeId::text: v.push(Value{std::string(r % 5, 'x') + "é" + std::to_string(r)}); break;
        case TypeId::date: v.push(Value{i * 97 - 800000}); break;
        default:
          // Also past the direct writer's bounds: 35+ digits, scale 61.
          if (r % 13 == 5) v.push(Value{Numeric{static_cast<__int128>(i + 1) * 100000000000000000LL * 1000000000000000000LL, 3}});
          else if (r % 17 == 6) v.push(Value{Numeric{-static_cast<__int128>(i), 61}});
          else v.push(Value{Numeric{static_cast<__int128>(i) * 1234567 - 99, static_cast<int32_t>(r % 9)}});
          break;
      }
    }
    result.columns.push_back(std::move(v));
  }
  result.rows = rows;
  return result;
}

// The fields value_codec gives for row r.
std::vector<std::optional<std::string>> expected_row(const ResultSet& result, size_t r,
                                                     const std::vector<tally::Format>& formats) {
  std::vector<std::optional<std::string>> row;
  for (size_t c = 0; c < result.columns.size(); ++c) {
    const Vector& v = result.columns[c];
    if (v.null_at(r)) { row.emplace_back(std::nullopt); continue; }
    std::string s;
    if (formats[c] == tally::Format::binary) append_binary(s, v, r);
    else append_text(s, v, r);
    row.emplace_back(std::move(s));
  }
  return row;
}

class ResultStreamTest : public ::testing::TestWithParam<tally::Format> {};

TEST_P(ResultStreamTest, BufferedRowsMatchValueCodec) {
  const ResultSet result = make_result(60000);  // several append batches
  const auto formats = std::vector<tally::Format>(result.columns.size(), GetParam());
  BufferWriter writer;
  size_t position = 0;
  EXPECT_EQ(stream_rows(result, formats, position, 0, writer), result.rows);
  EXPECT_EQ(position, result.rows);
  ASSERT_EQ(writer.rows.size(), result.rows);
  EXPECT_GT(writer.appended_calls, 2);
  for (size_t r = 0; r < result.rows; ++r) ASSERT_EQ(writer.rows[r], expected_row(result, r, formats)) << "row " << r;
}

TEST_P(ResultStreamTest, RowLimitResumesWhereItStopped) {
  const ResultSet result = make_result(1000);
  const auto formats = std::vector<tally::Format>(result.columns.size(), GetParam());
  BufferWriter writer;
  size_t position = 0;
  EXPECT_EQ(stream_rows(result, formats, position, 300, writer), 300u);
  EXPECT_EQ(stream_rows(result, formats, position, 300, writer), 300u);
  EXPECT_EQ(stream_rows(result, formats, position, 0, writer), 400u);
  EXPECT_EQ(stream_rows(result, formats, position, 10, writer), 0u);
  ASSERT_EQ(writer.rows.size(), 1000u);
  for (size_t r = 0; r < result.rows; ++r) ASSERT_EQ(writer.rows[r], expected_row(result, r, formats)) << "row " << r;
}

TEST_P(ResultStreamTest, WriterWithoutBufferGetsTheSameFields) {
  const ResultSet result = make_result(500);
  const auto formats = std::vector<tally::Format>(result.columns.size(), GetParam());
  testing::RecordingWriter writer;
  size_t position = 0;
  EXPECT_EQ(stream_rows(result, formats, position, 0, writer), 500u);
  ASSERT_EQ(writer.results.size(), 1u);
  ASSERT_EQ(writer.results[0].rows.size(), 500u);
  for (size_t r = 0; r < result.rows; ++r) ASSERT_EQ(writer.results[0].rows[r], expected_row(result, r, formats));
}

// Integer text is written by the encoder's own digit writer: every length
// from 1 to 19 digits, each side of every power of ten, both signs, the int64 limits.
TEST(ResultStream, IntegerTextAtEveryDigitCount) {
  ResultSet result;
  Vector v(SqlType{TypeId::int8});
  std::vector<int64_t> values = {0, INT64_MIN, INT64_MAX, INT64_MIN + 1};
  for (int64_t p = 1; p <= INT64_MAX / 10; p *= 10) {
    for (int64_t x : {p - 1, p, p + 1, 2 * p, 9 * p + (p - 1)}) {
      values.push_back(x);
      values.push_back(-x);
    }
  }
  for (int64_t x : values) v.push(Value{x});
  result.columns.push_back(std::move(v));
  result.rows = values.size();
  BufferWriter writer;
  size_t position = 0;
  stream_rows(result, {tally::Format::text}, position, 0, writer);
  ASSERT_EQ(writer.rows.size(), values.size());
  for (size_t r = 0; r < values.size(); ++r) ASSERT_EQ(writer.rows[r][0], std::to_string(values[r]));
}

// Numeric text written in place (avg and sum results) against value_codec's
// Numeric text, at every scale edge around each digit count, both signs, and
// on both sides of the 64-bit mantissa boundary.
TEST(ResultStream, NumericTextAtEveryScaleAndDigitCount) {
  std::vector<__int128> mantissas = {0, 1, 5, 9, 10, 99, 100};
  __int128 p = 1;
  for (int k = 1; k <= 37; ++k) {
    p *= 10;
    for (__int128 x : {p - 1, p, p + 1, 5 * p - 3}) mantissas.push_back(x);
  }
  const __int128 u64 = static_cast<__int128>(UINT64_MAX);
  for (__int128 x : {u64 - 1, u64, u64 + 1, static_cast<__int128>(INT64_MAX), static_cast<__int128>(INT64_MAX) + 1}) {
    mantissas.push_back(x);
  }
  Vector v(SqlType{TypeId::numeric});
  for (__int128 m : mantissas) {
    for (int32_t scale : {0, 1, 2, 3, 4, 15, 16, 17, 19, 20, 21, 38, 39, 59, 60, 61}) {
      for (__int128 sign : {1, -1}) {
        if (m * sign > static_cast<__int128>(1e37) || m * sign < -static_cast<__int128>(1e37)) continue;
        v.push(Value{Numeric{m * sign, scale}});
      }
    }
  }
  v.push(Value{Null{}});
  ResultSet result;
  result.rows = v.size();
  result.columns.push_back(std::move(v));
  BufferWriter writer;
  size_t position = 0;
  stream_rows(result, {tally::Format::text}, position, 0, writer);
  ASSERT_EQ(writer.rows.size(), result.rows);
  for (size_t r = 0; r < result.rows; ++r) {
    ASSERT_EQ(writer.rows[r], expected_row(result, r, {tally::Format::text})) << "row " << r;
  }
  EXPECT_EQ(writer.rows.back()[0], std::nullopt);
}

// 16K rows and more are encoded in blocks by the session's thread and the
// worker pool's helpers, sent in row order: the same messages in the same
// order; a row limit that starts mid-block too.
TEST_P(ResultStreamTest, TwoThreadEncodingKeepsRowOrder) {
  const ResultSet result = make_result(300007);
  const auto formats = std::vector<tally::Format>(result.columns.size(), GetParam());
  BufferWriter writer;
  size_t position = 0;
  EXPECT_EQ(stream_rows(result, formats, position, 7, writer), 7u);
  EXPECT_EQ(stream_rows(result, formats, position, 0, writer), result.rows - 7);
  ASSERT_EQ(writer.rows.size(), result.rows);
  for (size_t r = 0; r < result.rows; ++r) ASSERT_EQ(writer.rows[r], expected_row(result, r, formats)) << "row " << r;
}

// Portal/cursor row limits that land in the middle of a parallel range and
// of a block (Execute with max_rows, FETCH n): each call sends exactly its
// rows, in order, whatever the block size the row count picks.
TEST_P(ResultStreamTest, RowLimitsLandingMidRangeKeepOrder) {
  const ResultSet result = make_result(70001);
  const auto formats = std::vector<tally::Format>(result.columns.size(), GetParam());
  BufferWriter writer;
  size_t position = 0;
  const uint64_t limits[] = {16384, 20000, 1, 16383, 0};  // parallel, parallel mid-block, one row, just below, the rest
  size_t expected_position = 0;
  for (uint64_t limit : limits) {
    const size_t want = limit == 0 ? result.rows - expected_position : static_cast<size_t>(limit);
    EXPECT_EQ(stream_rows(result, formats, position, limit, writer), want);
    expected_position += want;
    EXPECT_EQ(position, expected_position);
    ASSERT_EQ(writer.rows.size(), expected_position);
  }
  for (size_t r = 0; r < result.rows; ++r) ASSERT_EQ(writer.rows[r], expected_row(result, r, formats)) << "row " << r;
}

// The session's thread never waits for a helper to start: with every pool
// worker busy (another session's long encoding), it encodes every block
// itself and the result is the same; the helpers it queued find the job
// done when they start and touch nothing.
TEST_P(ResultStreamTest, BusyPoolStillEncodesEveryRowInOrder) {
  cpu::WorkerPool& pool = cpu::WorkerPool::shared();
  std::mutex mutex;
  std::condition_variable released;
  bool release = false;
  for (int w = 0; w < pool.workers(); ++w) {
    pool.submit([&] {
      std::unique_lock lock(mutex);
      released.wait(lock, [&] { return release; });
    });
  }
  const ResultSet result = make_result(50000);
  const auto formats = std::vector<tally::Format>(result.columns.size(), GetParam());
  BufferWriter writer;
  size_t position = 0;
  EXPECT_EQ(stream_rows(result, formats, position, 0, writer), result.rows);
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  released.notify_all();
  ASSERT_EQ(writer.rows.size(), result.rows);
  for (size_t r = 0; r < result.rows; ++r) ASSERT_EQ(writer.rows[r], expected_row(result, r, formats)) << "row " << r;
  // The pool serves the next result again.
  BufferWriter again;
  position = 0;
  EXPECT_EQ(stream_rows(result, formats, position, 0, again), result.rows);
  EXPECT_EQ(again.rows, writer.rows);
}

// A client that reads slower than the helpers encode: once the window is
// full, the helpers give their pool threads back (other sessions' results
// get helpers) and the session's thread finishes the result alone, in order.
TEST(ResultStreamPool, HelpersLeaveAJobWhoseClientIsSlow) {
  cpu::WorkerPool& pool = cpu::WorkerPool::shared();
  if (pool.workers() == 0) GTEST_SKIP() << "one hardware thread: no worker pool";
  // 13 blocks of up to 16K rows; each hand-over to the slow writer takes
  // 120 ms, longer than a helper waits for a free slot (50 ms).
  const ResultSet result = make_result(200000);
  const auto formats = std::vector<tally::Format>(result.columns.size(), tally::Format::text);
  class Slow final : public protocol::DiscardingResultWriter {
   public:
    std::string* data_row_buffer() override { return &buffer; }
    void data_rows_appended() override {
      bytes += buffer.size();
      buffer.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(120));  // the client is slow
    }
    std::string buffer;
    std::atomic<size_t> bytes{0};
  } slow;
  // The whole result's bytes, from a fast writer.
  BufferWriter fast;
  size_t fast_position = 0;
  stream_rows(result, formats, fast_position, 0, fast);
  size_t total = 0;
  for (const auto& row : fast.rows) {
    total += 7;
    for (const auto& f : row) total += 4 + (f ? f->size() : 0);
  }
  std::atomic<bool> streaming{true};
  size_t position = 0;
  std::thread streamer([&] {
    stream_rows(result, formats, position, 0, slow);
    streaming = false;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // helpers have filled the window by now
  std::mutex mutex;
  std::condition_variable ran;
  int probes = 0, during = 0;
  for (int w = 0; w < pool.workers(); ++w) {
    pool.submit([&] {
      std::lock_guard lock(mutex);
      ++probes;
      // Without giving their threads back, helpers stay until every block
      // is claimed: the last few blocks before the end.
      during += streaming && slow.bytes < total / 2 ? 1 : 0;
      ran.notify_all();
    });
  }
  streamer.join();
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(ran.wait_for(lock, std::chrono::seconds(10), [&] { return probes == pool.workers(); }));
  }
  EXPECT_EQ(position, result.rows);
  EXPECT_EQ(slow.bytes, total);
  EXPECT_EQ(during, pool.workers()) << "a helper held its pool thread until the slow result ended";
}

// A writer whose send fails (the client went away) mid-result: the error
// reaches the caller, and no helper reads the result after stream_rows returns.
TEST_P(ResultStreamTest, SendFailureDuringTwoThreadEncodingPropagates) {
  class FailingWriter final : public protocol::DiscardingResultWriter {
   public:
    int calls = 0;
    std::string* data_row_buffer() override { return &buffer; }
    void data_rows_appended() override {
      buffer.clear();
      if (++calls == 5) throw std::runtime_error("connection reset");
    }
    std::string buffer;
  };
  const ResultSet result = make_result(300007);
  const auto formats = std::vector<tally::Format>(result.columns.size(), GetParam());
  FailingWriter writer;
  size_t position = 0;
  EXPECT_THROW(stream_rows(result, formats, position, 0, writer), std::runtime_error);
  EXPECT_EQ(writer.calls, 5);
}

// Results whose every column is an integer, boolean, float (binary) or an
// avg left as int64 sums and counts (AvgParts) take the lean row writer:
// the same fields as value_codec, with NULLs in every column (an avg's NULL
// rows are its count-0 groups), int limits, avg sums at the int64 limits
// and every avg scale (16 or 20 and the small-count ones), in a result
// large enough for the two-thread encoding, resumed mid-result.
ResultSet make_lean_result(size_t rows, bool with_floats) {
  ResultSet result;
  std::vector<SqlType> types = {SqlType{TypeId::int4}, SqlType{TypeId::int8}, SqlType{TypeId::int2},
                                SqlType{TypeId::boolean}};
  if (with_floats) {
    types.push_back(SqlType{TypeId::float4});
    types.push_back(SqlType{TypeId::float8});
  }
  for (const SqlType& t : types) {
    Vector v(t);
    for (size_t r = 0; r < rows; ++r) {
      const auto i = static_cast<int64_t>(r);
      if (r % 11 == 4 + static_cast<size_t>(t.id) % 5) { v.push(Null{}); continue; }
      switch (t.id) {
        case TypeId::int2: v.push(Value{(i * 37) % 65536 - 32768}); break;
        case TypeId::int4: v.push(Value{i % 2 ? INT32_MIN + i : INT32_MAX - i}); break;
        case TypeId::int8: v.push(Value{i % 3 == 0 ? INT64_MIN + i : (i % 3 == 1 ? INT64_MAX - i : i - 500)}); break;
        case TypeId::boolean: v.push(Value{r % 3 == 0}); break;
        case TypeId::float4: v.push(Value{static_cast<double>(static_cast<float>(i) / 3.0f)}); break;
        default: v.push(Value{r % 13 == 0 ? -0.0 : static_cast<double>(i) * 1e300 / 7e299}); break;
      }
    }
    result.columns.push_back(std::move(v));
  }
  Vector avg(SqlType{TypeId::numeric});
  auto parts = std::make_shared<AvgParts>();
  const int64_t sums[] = {0, 1, -1, 7, -500, 9999, 10000, 123456789, INT64_MAX, -INT64_MAX, INT64_MIN, 5};
  for (size_t r = 0; r < rows; ++r) {
    const int64_t count = r % 9 == 2 ? 0 : static_cast<int64_t>(r % 4 + 1) * (r % 5 == 0 ? 1000003 : 1);
    const int64_t base = sums[r % 12];
    const bool extreme = base == INT64_MAX || base <= -INT64_MAX;
    parts->sum.push_back(count == 0 ? 0 : (extreme ? base : base - static_cast<int64_t>(r % 3)));
    parts->count.push_back(count);
    avg.nulls.push_back(count == 0 ? 1 : 0);
  }
  avg.count = rows;
  avg.avg_parts = std::move(parts);
  result.columns.push_back(std::move(avg));
  result.rows = rows;
  return result;
}

TEST_P(ResultStreamTest, LeanRowShapeMatchesValueCodec) {
  for (bool with_floats : {false, true}) {
    if (with_floats && GetParam() == tally::Format::text) continue;  // float text takes the generic writer
    const ResultSet result = make_lean_result(70001, with_floats);
    const auto formats = std::vector<tally::Format>(result.columns.size(), GetParam());
    BufferWriter writer;
    size_t position = 0;
    EXPECT_EQ(stream_rows(result, formats, position, 5, writer), 5u);
    EXPECT_EQ(stream_rows(result, formats, position, 30000, writer), 30000u);
    EXPECT_EQ(stream_rows(result, formats, position, 0, writer), result.rows - 30005);
    ASSERT_EQ(writer.rows.size(), result.rows);
    size_t nulls = 0;
    for (size_t r = 0; r < result.rows; ++r) {
      ASSERT_EQ(writer.rows[r], expected_row(result, r, formats)) << "row " << r;
      nulls += !writer.rows[r].back().has_value();
    }
    EXPECT_GT(nulls, 0u);
    // The writer without a buffer (one data_row per row) gets the same fields.
    testing::RecordingWriter plain;
    position = 0;
    EXPECT_EQ(stream_rows(result, formats, position, 100, plain), 100u);
    ASSERT_EQ(plain.results.size(), 1u);
    for (size_t r = 0; r < 100; ++r) ASSERT_EQ(plain.results[0].rows[r], expected_row(result, r, formats));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ResultStreamTest,
                         ::testing::Values(tally::Format::text, tally::Format::binary),
                         [](const auto& info) { return info.param == tally::Format::text ? "text" : "binary"; });

}  // namespace
}  // namespace tally::executor
