// A scan skips the stored chunks whose statistics (each column's min and max
// over the chunk) leave no row that passes a comparison of a stored integer
// column with a constant (executor/operators/table_scan.hpp,
// skipped_chunks): a table loaded in time order, filtered by a time range,
// reads the chunks of that range only. Every answer is that of the same
// query with its columns wrapped in `+ 0` (which no chunk's statistics
// decide), across dates, timestamps, int4, int8, numeric, text (by the
// dictionary codes of the texts compared), IN lists,
// column-to-column comparisons, NULLs, a chunk of NULLs only, constants
// past a type's range, float comparisons (never skipped: a chunk's float
// range leaves NaN out), joins, aggregates over no rows, ORDER BY ... LIMIT,
// and after a DELETE; EXPLAIN ANALYZE says how many chunks were skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include "common/engine_counters.hpp"
#include "tests/executor/embedded_database.hpp"
#include "tests/executor/query_outcome.hpp"

namespace tally::executor {
namespace {

using testing::QueryOutcome;
using testing::run_simple_query;

class ChunkSkippingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // ev: ten chunks of 1,000 rows, chunk c holding days 10c..10c+9 of
    // 2024, ids 1000c+1..1000c+1000, amounts whose range moves with c, a
    // float, a second id that is the first minus 5 (so `id > id2` on every
    // row), and a column NULL in chunk 3 only.
    run("CREATE TABLE ev (id int, big int8, day date, at timestamp, amount numeric(12,2), f float8, id2 int, "
        "sparse int, tag text, vtag varchar(10))");
    for (int c = 0; c < 10; ++c) {
      const std::string base = std::to_string(1000 * c);
      run("INSERT INTO ev SELECT " + base + " + g, (" + base + " + g)::int8 * 3000000000, DATE '2024-01-01' + " +
          std::to_string(10 * c) + " + g % 10, TIMESTAMP '2024-01-01 00:00' + (" + base +
          " + g) * interval '1 minute', (" + base + " + g) / 4.0, CASE WHEN g % 97 = 0 THEN 'NaN'::float8 ELSE g / 8.0 END, " +
          base + " + g - 5, " + (c == 3 ? std::string("NULL") : "CASE WHEN g % 5 = 0 THEN NULL ELSE g END") +
          ", 'c" + std::to_string(c) + "-' || (g % 5), 'v" + std::to_string(c) + "-' || (g % 3) FROM generate_series(1, 1000) g");
    }
  }
  QueryOutcome run(const std::string& sql) {
    QueryOutcome r = run_simple_query(db_.session(), sql);
    EXPECT_TRUE(r.ok) << sql << ": " << r.sqlstate << " " << r.message;
    return r;
  }
  std::vector<std::vector<std::optional<std::string>>> rows(const std::string& sql) { return run(sql).rows; }
  std::string plan(const std::string& sql) {
    std::string text;
    for (const auto& row : run("EXPLAIN ANALYZE " + sql).rows) text += row[0].value_or("") + "\n";
    return text;
  }
  // `sql` answers as `oracle` (the same query that no statistics decide),
  // and its EXPLAIN ANALYZE says `skipped` of the 10 chunks were skipped.
  void expect(const std::string& sql, const std::string& oracle, int skipped) {
    const auto want = rows(oracle);
    EXPECT_EQ(plan(oracle).find("skipped by their min/max"), std::string::npos) << oracle;
    EXPECT_EQ(rows(sql), want) << sql;
    const std::string text = plan(sql);
    if (skipped == 0) {
      EXPECT_EQ(text.find("skipped by their min/max"), std::string::npos) << sql << "\n" << text;
    } else {
      EXPECT_NE(text.find(std::to_string(skipped) + " of 10 chunks skipped by their min/max"), std::string::npos)
          << sql << "\n" << text;
    }
  }
  testing::EmbeddedDatabase db_{"tally-chunk-skipping", [](config::Config& c) { c.chunk_rows = 1000; }};
};

TEST_F(ChunkSkippingTest, RangesOfEachIntegerTypeReadTheirChunksOnly) {
  expect("SELECT count(*), sum(amount), min(id), max(id) FROM ev WHERE day >= DATE '2024-01-21' AND day < DATE '2024-02-10'",
         "SELECT count(*), sum(amount), min(id), max(id) FROM ev WHERE day + 0 >= DATE '2024-01-21' AND day + 0 < DATE '2024-02-10'",
         8);
  expect("SELECT count(*), sum(id) FROM ev WHERE at BETWEEN TIMESTAMP '2024-01-03 00:00' AND TIMESTAMP '2024-01-04 12:00'",
         "SELECT count(*), sum(id) FROM ev WHERE at + interval '0 s' BETWEEN TIMESTAMP '2024-01-03 00:00' AND "
         "TIMESTAMP '2024-01-04 12:00'",
         6);
  expect("SELECT count(*), sum(amount) FROM ev WHERE id = 4321", "SELECT count(*), sum(amount) FROM ev WHERE id + 0 = 4321", 9);
  expect("SELECT count(*) FROM ev WHERE big > 27000000000000", "SELECT count(*) FROM ev WHERE big + 0 > 27000000000000", 9);
  expect("SELECT count(*), min(id) FROM ev WHERE amount <= 250.25", "SELECT count(*), min(id) FROM ev WHERE amount + 0 <= 250.25",
         8);
  expect("SELECT count(*) FROM ev WHERE id IN (5, 2500, 2600, 9001)", "SELECT count(*) FROM ev WHERE id + 0 IN (5, 2500, 2600, 9001)",
         7);
  expect("SELECT count(*) FROM ev WHERE id <> 5", "SELECT count(*) FROM ev WHERE id + 0 <> 5", 0);
}

TEST_F(ChunkSkippingTest, NothingMatchingSkipsEveryChunk) {
  expect("SELECT count(*), sum(amount), max(day) FROM ev WHERE id > 10000",
         "SELECT count(*), sum(amount), max(day) FROM ev WHERE id + 0 > 10000", 10);
  expect("SELECT day, count(*) FROM ev WHERE id < 1 GROUP BY day", "SELECT day, count(*) FROM ev WHERE id + 0 < 1 GROUP BY day", 10);
  // Constants past int4's range.
  expect("SELECT count(*) FROM ev WHERE id > 3000000000", "SELECT count(*) FROM ev WHERE id + 0 > 3000000000", 10);
  expect("SELECT count(*) FROM ev WHERE id > -3000000000", "SELECT count(*) FROM ev WHERE id + 0 > -3000000000", 0);
}

TEST_F(ChunkSkippingTest, NullsAndFloatsAndColumnPairs) {
  // Chunk 3 holds NULLs only: any comparison of `sparse` skips it.
  expect("SELECT count(*), sum(id) FROM ev WHERE sparse >= 1", "SELECT count(*), sum(id) FROM ev WHERE sparse + 0 >= 1", 1);
  expect("SELECT count(*) FROM ev WHERE sparse IS NULL AND id > 8000", "SELECT count(*) FROM ev WHERE sparse IS NULL AND id + 0 > 8000",
         8);
  // NaN is above every float: `f > 1000` holds for it in every chunk.
  expect("SELECT count(*) FROM ev WHERE f > 1000", "SELECT count(*) FROM ev WHERE f + 0 > 1000", 0);
  expect("SELECT count(*) FROM ev WHERE id < id2", "SELECT count(*) FROM ev WHERE id + 0 < id2", 0);
  // sparse is 1..999 (chunk 3: NULL): only chunk 0's ids can be below it.
  expect("SELECT count(*) FROM ev WHERE id < sparse", "SELECT count(*) FROM ev WHERE id + 0 < sparse", 9);
  expect("SELECT count(*) FROM ev WHERE id > id2 AND id2 >= 8995", "SELECT count(*) FROM ev WHERE id > id2 AND id2 + 0 >= 8995", 8);
}

TEST_F(ChunkSkippingTest, TextEqualitiesSkipByTheirCodes) {
  // Chunk c holds tags 'c<c>-0' to 'c<c>-4', coded as they were loaded.
  expect("SELECT count(*), min(id) FROM ev WHERE tag = 'c3-1'", "SELECT count(*), min(id) FROM ev WHERE tag || '' = 'c3-1'", 9);
  expect("SELECT count(*), max(id) FROM ev WHERE tag IN ('c3-1', 'c7-2', 'nowhere', NULL)",
         "SELECT count(*), max(id) FROM ev WHERE tag || '' IN ('c3-1', 'c7-2', 'nowhere', NULL)", 8);
  expect("SELECT count(*) FROM ev WHERE tag = 'nowhere'", "SELECT count(*) FROM ev WHERE tag || '' = 'nowhere'", 10);
  expect("SELECT count(*) FROM ev WHERE vtag = 'v5-2'", "SELECT count(*) FROM ev WHERE vtag || '' = 'v5-2'", 9);
  expect("SELECT tag, count(*) FROM ev WHERE 'c9-4' = tag AND id > 9500 GROUP BY tag",
         "SELECT tag, count(*) FROM ev WHERE 'c9-4' = tag || '' AND id + 0 > 9500 GROUP BY tag", 9);
  // Not equalities: read every chunk.
  expect("SELECT count(*) FROM ev WHERE tag <> 'c3-1'", "SELECT count(*) FROM ev WHERE tag || '' <> 'c3-1'", 0);
  expect("SELECT count(*) FROM ev WHERE tag NOT IN ('c3-1')", "SELECT count(*) FROM ev WHERE tag || '' NOT IN ('c3-1')", 0);
}

// A prepared statement's plan holds `$1`: its comparisons are compiled with
// each execution's values, and the rows it reads (the engines' scan
// counter) are those of the chunks they leave.
TEST_F(ChunkSkippingTest, ParametersSkipPerExecution) {
  // A session that keeps named statements, as the protocol's does.
  struct Registry final : PreparedStatementRegistry {
    std::map<std::string, std::shared_ptr<PreparedStatement>> statements;
    std::shared_ptr<PreparedStatement> lookup(const std::string& name) override {
      const auto it = statements.find(name);
      return it == statements.end() ? nullptr : it->second;
    }
    bool add(const std::string& name, std::shared_ptr<PreparedStatement> s) override {
      return statements.emplace(name, std::move(s)).second;
    }
    bool remove(const std::string& name) override { return statements.erase(name) > 0; }
    void remove_all() override { statements.clear(); }
  } registry;
  SessionInfo info;
  info.user = info.database = "tally";
  info.prepared = &registry;
  const auto session = db_.database().handler_factory().create(info);
  auto in_session = [&](const std::string& sql) {
    QueryOutcome r = run_simple_query(*session, sql);
    EXPECT_TRUE(r.ok) << sql << ": " << r.sqlstate << " " << r.message;
    return r.rows;
  };
  in_session("PREPARE by_id(int) AS SELECT count(*), sum(amount) FROM ev WHERE id = $1");
  in_session("PREPARE by_range(date, date) AS SELECT count(*), min(id) FROM ev WHERE day >= $1 AND day < $2");
  in_session("PREPARE by_tag(text, int) AS SELECT count(*) FROM ev WHERE tag = 'c3-1' AND id < $2 AND $1 = $1");
  auto scanned = [&](const std::string& sql) {
    const uint64_t before = engine_counters().rows_scanned.load();
    const auto answer = in_session(sql);
    return std::make_pair(answer, engine_counters().rows_scanned.load() - before);
  };
  const auto one = scanned("EXECUTE by_id(4321)");
  EXPECT_EQ(one.first, rows("SELECT count(*), sum(amount) FROM ev WHERE id + 0 = 4321"));
  EXPECT_EQ(one.second, 1000u);
  const auto other = scanned("EXECUTE by_id(8765)");
  EXPECT_EQ(other.first, rows("SELECT count(*), sum(amount) FROM ev WHERE id + 0 = 8765"));
  EXPECT_EQ(other.second, 1000u);
  const auto range = scanned("EXECUTE by_range('2024-01-21', '2024-02-10')");
  EXPECT_EQ(range.first, rows("SELECT count(*), min(id) FROM ev WHERE day + 0 >= DATE '2024-01-21' AND day + 0 < DATE '2024-02-10'"));
  EXPECT_EQ(range.second, 2000u);
  const auto none = scanned("EXECUTE by_id(NULL)");
  EXPECT_EQ(none.first, rows("SELECT count(*), sum(amount) FROM ev WHERE id = NULL"));
  EXPECT_EQ(none.second, 10000u);  // a NULL parameter compiles to no comparison: every chunk is read
  const auto tag = scanned("EXECUTE by_tag('x', 3500)");
  EXPECT_EQ(tag.first, rows("SELECT count(*) FROM ev WHERE tag || '' = 'c3-1' AND id + 0 < 3500"));
  EXPECT_EQ(tag.second, 1000u);
}

// ORDER BY key LIMIT n over a table in key order (executor/top_n_chunk_bound.hpp):
// the chunks are read from the end the sort starts at, and once n rows are
// in, those whose key range cannot come first are not read. 40 chunks: at
// most the read-ahead's 16 are read before the first one's rows are in.
TEST_F(ChunkSkippingTest, OrderByLimitReadsTheChunksThatCanComeFirst) {
  run("CREATE TABLE log (n int, ts timestamp, v int, maybe int)");
  for (int c = 0; c < 40; ++c) {
    run("INSERT INTO log SELECT " + std::to_string(1000 * c) + " + g, TIMESTAMP '2024-05-01' + (" + std::to_string(1000 * c) +
        " + g) * interval '1 second', g % 10, " + (c == 7 ? std::string("NULL") : "CASE WHEN g % 3 = 0 THEN NULL ELSE g END") +
        " FROM generate_series(1, 1000) g");
  }
  auto scanned = [&](const std::string& sql) {
    const uint64_t before = engine_counters().rows_scanned.load();
    const auto answer = rows(sql);
    return std::make_pair(answer, engine_counters().rows_scanned.load() - before);
  };
  const char* cases[][2] = {
      {"SELECT n, ts FROM log ORDER BY ts DESC LIMIT 5", "SELECT n, ts FROM log ORDER BY ts + interval '0 s' DESC LIMIT 5"},
      {"SELECT * FROM log ORDER BY n LIMIT 3 OFFSET 2", "SELECT * FROM log ORDER BY n + 0 LIMIT 3 OFFSET 2"},
      {"SELECT n FROM log WHERE v = 3 ORDER BY ts DESC, n LIMIT 4", "SELECT n FROM log WHERE v = 3 ORDER BY ts + interval '0 s' DESC, n LIMIT 4"},
  };
  for (const auto& [sql, oracle] : cases) {
    const auto got = scanned(sql);
    EXPECT_EQ(got.first, rows(oracle)) << sql;
    EXPECT_LE(got.second, 17000u) << sql;
    EXPECT_NE(plan(sql).find("chunks skipped by the key range of the rows kept"), std::string::npos) << sql;
  }
  // PostgreSQL projects and filters every row before it sorts: an error of
  // a row in the oldest chunk is raised, so no chunk is skipped there.
  for (const char* sql : {"SELECT n, 1 / (n - 5) FROM log ORDER BY ts DESC LIMIT 5",
                          "SELECT n FROM log WHERE 1 / (n - 5) > -1 ORDER BY ts DESC LIMIT 5"}) {
    const QueryOutcome r = run_simple_query(db_.session(), sql);
    EXPECT_FALSE(r.ok) << sql;
    EXPECT_EQ(r.sqlstate, "22012") << sql;
  }
  // NULLs come first under DESC (and NULLS FIRST): chunk 7, all NULL, and
  // every chunk holding a NULL is read.
  for (const char* order : {"maybe DESC, n", "maybe NULLS FIRST, n", "maybe, n"}) {
    const std::string sql = std::string("SELECT n, maybe FROM log ORDER BY ") + order + " LIMIT 6";
    std::string oracle = sql;
    oracle.replace(oracle.find("ORDER BY maybe"), 14, "ORDER BY maybe + 0");
    EXPECT_EQ(rows(sql), rows(oracle)) << sql;
  }
}

TEST_F(ChunkSkippingTest, JoinsLimitsAndDeletes) {
  run("CREATE TABLE dim (day date, label text)");
  run("INSERT INTO dim SELECT DATE '2024-01-01' + g, 'd' || g FROM generate_series(0, 99) g");
  expect("SELECT d.label, count(*) FROM ev e JOIN dim d ON e.day = d.day WHERE e.id BETWEEN 2001 AND 2500 GROUP BY d.label "
         "ORDER BY d.label",
         "SELECT d.label, count(*) FROM ev e JOIN dim d ON e.day = d.day WHERE e.id + 0 BETWEEN 2001 AND 2500 GROUP BY d.label "
         "ORDER BY d.label",
         9);
  expect("SELECT id, amount FROM ev WHERE day > DATE '2024-03-25' ORDER BY amount DESC LIMIT 3",
         "SELECT id, amount FROM ev WHERE day + 0 > DATE '2024-03-25' ORDER BY amount DESC LIMIT 3", 8);
  expect("SELECT id FROM ev WHERE id BETWEEN 6998 AND 7003 ORDER BY id",
         "SELECT id FROM ev WHERE id + 0 BETWEEN 6998 AND 7003 ORDER BY id", 8);
  // DELETE rewrites the chunks with exact statistics.
  run("DELETE FROM ev WHERE id > 5000");
  EXPECT_EQ(rows("SELECT count(*) FROM ev WHERE id > 4990"), rows("SELECT count(*) FROM ev WHERE id + 0 > 4990"));
  EXPECT_EQ(rows("SELECT count(*) FROM ev WHERE id > 4990")[0][0], std::optional<std::string>("10"));
}

}  // namespace
}  // namespace tally::executor
