// A streamed result's count column and avg column that read one count array
// (count(*) and avg(w) of a NOT NULL w: the compact form's shared count)
// share it (Vector::shared_ints, AvgParts::shared_count) instead of each
// holding a copy, whichever comes first in the select list; and the rows the
// client gets, text and binary, are those of the materialized result
// (stream_to_client off: plain Vectors). Also with a HAVING (nothing shared)
// and with a count that is not shared (count(v) over a NULL-able v).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>

#include "executor/parser.hpp"
#include "executor/result_set.hpp"
#include "executor/select_plan.hpp"
#include "executor/table_provider.hpp"
#include "tests/executor/column_fixture.hpp"
#include "tests/executor/recording_writer.hpp"
#include "tests/executor/select_runner.hpp"

namespace tally::executor {
namespace {

using testing::column;

// t(g int4 with NULLs, w int4 NOT NULL, v int4 with NULLs): 40,000 rows in
// two chunks (two threads when asked), ~5,000 groups.
std::shared_ptr<MemoryTableProvider> make_tables() {
  auto table = std::make_shared<MemoryTable>(
      "t", std::vector<TableColumn>{{"g", {TypeId::int4}}, {"w", {TypeId::int4}}, {"v", {TypeId::int4}}});
  std::mt19937_64 rng(5);
  for (int chunk = 0; chunk < 2; ++chunk) {
    std::vector<int32_t> g, w, v;
    std::vector<uint8_t> g_valid, v_valid, all_valid;
    for (int r = 0; r < 20000; ++r) {
      const bool null_key = rng() % 100 == 0;
      g.push_back(null_key ? 0 : static_cast<int32_t>(rng() % 5000) - 100);
      g_valid.push_back(null_key ? 0 : 1);
      const uint64_t pick = rng() % 300;
      w.push_back(pick == 0 ? INT32_MAX : pick == 1 ? INT32_MIN : static_cast<int32_t>(rng() % 20001) - 10000);
      v.push_back(static_cast<int32_t>(rng() % 100));
      v_valid.push_back(rng() % 5 == 0 ? 0 : 1);
      all_valid.push_back(1);
    }
    auto batch = std::make_shared<storage::ChunkBatch>();
    batch->rows = g.size();
    batch->columns.push_back(column(TypeId::int4, g, g_valid));
    batch->columns.push_back(column(TypeId::int4, w, all_valid));
    batch->columns.push_back(column(TypeId::int4, v, v_valid));
    table->append(batch);
  }
  auto tables = std::make_shared<MemoryTableProvider>();
  tables->put(table);
  return tables;
}

ResultSet run(const std::string& sql, MemoryTableProvider& tables, bool streamed, int threads) {
  ExecContext ec;
  ec.threads = threads;
  ec.engine = "cpu";
  ec.stream_to_client = streamed;
  return testing::run_select_sql(sql, tables, ec);
}

std::vector<std::string> rows_of(const ResultSet& result, tally::Format format) {
  testing::RecordingWriter writer;
  writer.row_description(result.fields);
  size_t position = 0;
  while (stream_rows(result, std::vector<tally::Format>(result.columns.size(), format), position, 1000, writer) > 0) {
  }
  std::vector<std::string> lines;
  for (const auto& row : writer.results.at(0).rows) {
    std::string line;
    for (const auto& f : row) line += (f ? "[" + *f + "]" : "NULL") + "|";
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(SharedCount, AStreamedCountAndAvgShareOneCountArray) {
  auto tables = make_tables();
  // (query, column of the count, column of the avg)
  const std::vector<std::tuple<std::string, size_t, size_t>> cases = {
      {"SELECT g, count(*), sum(w), min(w), max(w), avg(w) FROM t GROUP BY g", 1, 5},
      {"SELECT g, avg(w), count(*) FROM t GROUP BY g", 2, 1},
      {"SELECT g, count(w), avg(w), count(*) FROM t GROUP BY g", 1, 2},
  };
  for (const int threads : {1, 2}) {
    for (const auto& [q, count_column, avg_column] : cases) {
      const ResultSet streamed = run(q, *tables, true, threads);
      const ResultSet plain = run(q, *tables, false, threads);
      ASSERT_GT(streamed.rows, 4000u) << q;
      const Vector& count = streamed.columns.at(count_column);
      const Vector& avg = streamed.columns.at(avg_column);
      ASSERT_NE(count.shared_ints, nullptr) << q << ": the count column holds its own array";
      ASSERT_NE(avg.avg_parts, nullptr) << q;
      EXPECT_EQ(avg.avg_parts->shared_count, count.shared_ints) << q << ": the avg holds another count array";
      EXPECT_TRUE(count.ints.empty() && avg.avg_parts->count.empty()) << q;
      EXPECT_EQ(plain.columns.at(count_column).shared_ints, nullptr) << q;
      for (const auto format : {tally::Format::text, tally::Format::binary}) {
        EXPECT_EQ(rows_of(streamed, format), rows_of(plain, format)) << q << " threads " << threads;
      }
      // Readers through Vector::get see the shared values.
      for (size_t r = 0; r < streamed.rows; r += 401) {
        EXPECT_EQ(std::get<int64_t>(count.get(r)), plain.columns[count_column].ints[r]) << q;
      }
    }
  }
}

TEST(SharedCount, CountsThatAreNotSharedAreAnswersAsBefore) {
  auto tables = make_tables();
  for (const std::string q : {"SELECT g, count(v), avg(v), count(*) FROM t GROUP BY g",
                              "SELECT g, count(*), avg(w) FROM t GROUP BY g HAVING count(*) > 1",
                              "SELECT g, count(*), avg(w) FROM t GROUP BY g ORDER BY g LIMIT 100"}) {
    const ResultSet streamed = run(q, *tables, true, 2);
    const ResultSet plain = run(q, *tables, false, 2);
    ASSERT_GT(streamed.rows, 0u) << q;
    for (const auto& c : streamed.columns) {
      // A count and an avg of different arrays, or a result reordered or
      // filtered after the aggregation: nothing shared.
      if (c.shared_ints && c.avg_parts == nullptr) {
        bool read_by_avg = false;
        for (const auto& d : streamed.columns) read_by_avg |= d.avg_parts && d.avg_parts->shared_count == c.shared_ints;
        EXPECT_TRUE(read_by_avg) << q << ": a shared count no avg reads";
      }
    }
    for (const auto format : {tally::Format::text, tally::Format::binary}) {
      EXPECT_EQ(rows_of(streamed, format), rows_of(plain, format)) << q;
    }
  }
}

}  // namespace
}  // namespace tally::executor
