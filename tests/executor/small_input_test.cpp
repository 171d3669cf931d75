// A table smaller than the planner's single-thread threshold
// (engine_aggregator.cpp, kSingleThreadRows) is aggregated by one thread when
// the thread count is left to the engine (ExecContext::threads = 0), and the
// answers are those of the same query forced onto two threads: NULL keys,
// NULL inputs, FILTER, expression keys, a global aggregate, and every
// aggregate the engines take (count, sum and avg of int2/int4/int8/float8,
// min/max of integers and floats, bool_and/bool_or, variance and standard
// deviation, the two-input regression family). A table at the threshold
// keeps every thread. EXPLAIN ANALYZE's "threads=N" says which ran.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <thread>

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

// A table "name" of `rows` rows in chunks of at most 4,000: g int4 (NULLs),
// v int4 (NULLs; every v of group 7 NULL), w int2, b int8, f float8 (NULLs),
// x bool.
std::shared_ptr<MemoryTable> make_table(const std::string& name, size_t rows, uint32_t oid) {
  auto table = std::make_shared<MemoryTable>(
      name,
      std::vector<TableColumn>{{"g", {TypeId::int4}}, {"v", {TypeId::int4}}, {"w", {TypeId::int2}}, {"b", {TypeId::int8}},
                               {"f", {TypeId::float8}}, {"x", {TypeId::boolean}}},
      oid);
  std::mt19937_64 rng(rows);
  for (size_t done = 0; done < rows;) {
    const size_t n = std::min<size_t>(4000, rows - done);
    std::vector<int32_t> g, v;
    std::vector<int16_t> w;
    std::vector<int64_t> b;
    std::vector<double> f;
    std::vector<uint8_t> x, g_valid, v_valid, f_valid, all_valid;
    for (size_t r = 0; r < n; ++r) {
      const bool null_key = rng() % 40 == 0;
      const int32_t key = static_cast<int32_t>(rng() % 200) - 30;
      g.push_back(null_key ? 0 : key);
      g_valid.push_back(null_key ? 0 : 1);
      const uint64_t pick = rng() % 500;
      v.push_back(pick == 0 ? INT32_MAX : pick == 1 ? INT32_MIN : static_cast<int32_t>(rng() % 2001) - 1000);
      v_valid.push_back(key == 7 || rng() % 7 == 0 ? 0 : 1);
      w.push_back(static_cast<int16_t>(static_cast<int>(rng() % 601) - 300));
      b.push_back(static_cast<int64_t>(rng()) / 5);
      // Dyadic values: sums are exact in any order, so float answers cannot
      // differ by thread count through rounding alone.
      f.push_back(static_cast<double>(static_cast<int>(rng() % 4001) - 2000) / 8.0);
      f_valid.push_back(rng() % 9 == 0 ? 0 : 1);
      x.push_back(rng() % 3 == 0 ? 1 : 0);
      all_valid.push_back(1);
    }
    auto batch = std::make_shared<storage::ChunkBatch>();
    batch->rows = n;
    batch->columns.push_back(column(TypeId::int4, g, g_valid));
    batch->columns.push_back(column(TypeId::int4, v, v_valid));
    batch->columns.push_back(column(TypeId::int2, w, all_valid));
    batch->columns.push_back(column(TypeId::int8, b, all_valid));
    batch->columns.push_back(column(TypeId::float8, f, f_valid));
    batch->columns.push_back(column(TypeId::boolean, x, all_valid));
    table->append(batch);
    done += n;
  }
  return table;
}

struct Answer {
  std::vector<std::string> rows;  // sorted "a|b|NULL" lines
  std::string threads;            // the engine's "threads=N", "" if no engine ran
};

Answer run(const std::string& sql, MemoryTableProvider& tables, int threads) {
  std::vector<std::string> explain;
  ExecContext ec;
  ec.threads = threads;
  ec.engine = "cpu";
  ec.explain = &explain;
  ec.stream_to_client = true;
  Answer answer;
  answer.rows = testing::sorted_text_lines(testing::run_select_sql(sql, tables, ec));
  for (const auto& line : explain) {
    const size_t at = line.find("threads=");
    if (at == std::string::npos) continue;
    const size_t end = line.find_first_of(" ,", at);
    answer.threads = line.substr(at, end == std::string::npos ? std::string::npos : end - at);
  }
  return answer;
}

const std::vector<std::string>& queries(const std::string& table) {
  static std::vector<std::string> out;
  out = {
      "SELECT g, count(*), count(v), sum(v), avg(v), sum(w), avg(w), sum(b), avg(b), min(v), max(v), min(b), max(w) "
      "FROM " + table + " GROUP BY g",
      "SELECT g, sum(f), avg(f), min(f), max(f), count(f), bool_and(x), bool_or(x) FROM " + table + " GROUP BY g",
      "SELECT g, var_samp(v), var_pop(w), stddev_samp(f), stddev_pop(v), variance(f), stddev(w) FROM " + table +
          " GROUP BY g",
      "SELECT g, corr(f, f * 2), covar_pop(f, f), covar_samp(f, f), regr_count(f, f), regr_avgx(f, f), "
      "regr_sxx(f, f) FROM " + table + " GROUP BY g",
      "SELECT g, count(*) FILTER (WHERE v > 0), sum(v) FILTER (WHERE w < 0), avg(w) FILTER (WHERE x), "
      "max(f) FILTER (WHERE g IS NULL OR g > 50) FROM " + table + " GROUP BY g",
      "SELECT g % 7, count(*), sum(v), avg(f) FROM " + table + " GROUP BY g % 7",
      "SELECT w, count(*), sum(b), min(v) FROM " + table + " GROUP BY w",
      "SELECT count(*), count(v), sum(v), avg(v), min(f), max(b), var_samp(w) FROM " + table,
      "SELECT g, count(*), sum(v) FROM " + table + " WHERE g > 1000000 GROUP BY g",
  };
  return out;
}

TEST(SmallInput, ATinyTableRunsOnOneThreadWithTheSameAnswers) {
  MemoryTableProvider tables;
  tables.put(make_table("small", 3000, 16384));
  for (const auto& q : queries("small")) {
    const Answer automatic = run(q, tables, 0);
    const Answer two = run(q, tables, 2);
    EXPECT_EQ(automatic.rows, two.rows) << q;
    EXPECT_EQ(automatic.threads, "threads=1") << q;
    EXPECT_EQ(two.threads, "threads=2") << q;
  }
  // NULL key and the all-NULL group show up (the data is not degenerate).
  const auto rows = run("SELECT g, sum(v), avg(v) FROM small GROUP BY g", tables, 0).rows;
  EXPECT_NE(std::find(rows.begin(), rows.end(), "7|NULL|NULL"), rows.end());
  EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [](const std::string& r) { return r.rfind("NULL|", 0) == 0; }));
  EXPECT_GT(rows.size(), 150u);
}

TEST(SmallInput, ATableAtTheThresholdKeepsEveryThread) {
  MemoryTableProvider tables;
  tables.put(make_table("big", size_t{1} << 15, 16385));
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  for (const auto& q : {queries("big")[0], queries("big")[4]}) {
    const Answer automatic = run(q, tables, 0);
    EXPECT_EQ(automatic.threads, "threads=" + std::to_string(hardware)) << q;
    EXPECT_EQ(automatic.rows, run(q, tables, 1).rows) << q;
  }
}

}  // namespace
}  // namespace tally::executor
