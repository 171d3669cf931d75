// The text of count/sum/min/max/avg results as the CPU engine path writes
// them (finalize_column's avg division, integer min/max copies, the in-place
// numeric and integer text writers) must be the generic path's, which
// computes each group with numeric_div and Numeric's own text (both checked
// against PostgreSQL 15 by the differential tests): avg at every scale edge
// (1 to 20 fraction digits), negative sums, NULL and empty groups, int2/int4/
// int8 limits, FILTER. The rows are also pinned to what PostgreSQL 15
// printed for the same table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "executor/database.hpp"
#include "tests/executor/embedded_database.hpp"
#include "tests/executor/query_outcome.hpp"

namespace tally::executor {
namespace {

using testing::QueryOutcome;
using testing::run_simple_query;

class AggregateTextTest : public ::testing::Test {
 protected:
  QueryOutcome run(const std::string& sql) {
    QueryOutcome r = run_simple_query(db_.session(), sql);
    EXPECT_TRUE(r.ok) << sql << ": " << r.sqlstate << " " << r.message;
    return r;
  }

  // Rows of `sql` on one engine, sorted (hash order is not promised).
  std::vector<std::vector<std::optional<std::string>>> rows_on(const std::string& engine, const std::string& sql) {
    run("SET tally.engine = " + engine);
    auto rows = run(sql).rows;
    std::sort(rows.begin(), rows.end());
    return rows;
  }

  testing::EmbeddedDatabase db_{"tally-aggregate-text"};
};

TEST_F(AggregateTextTest, EnginePathWritesWhatTheGenericPathWrites) {
  run("CREATE TABLE t (g int, a int2, b int4, c int8)");
  // One group per edge; g NULL is the NULL-key group.
  run("INSERT INTO t VALUES "
      "(1, 1, 1, 1), (1, 2, 2, 2), "                                  // 1.5: scale 16
      "(2, 1, 1, 1), "                                                // 1.000...: scale 20
      "(3, -1, -1, -1), (3, -2, -2, -2), "                            // negative
      "(4, 0, 0, 0), "                                                // zero at scale 20
      "(5, 1, 1, 1), (5, 1, 1, 1), (5, 2, 2, 2), "                    // 1.3333333333333333
      "(6, 9999, 9999, 9999), (6, 10000, 10000, 10000), (6, 10001, 10001, 10001), "  // first base-10000 digit ties
      "(7, 32767, 2147483647, 9223372036854775807), (7, 32767, 2147483647, 9223372036854775806), "
      "(8, -32768, -2147483648, -9223372036854775808), (8, -32768, -2147483648, -9223372036854775808), "
      "(9, NULL, NULL, NULL), (9, NULL, NULL, NULL), "                // every value NULL: NULL sum/avg/min/max
      "(10, 3, -7, 123456789012), (10, NULL, 5, -123456789013), "
      "(11, 1, 1, 1), (11, 1, 1, 1), (11, 1, 1, 1), (11, 1, 1, 1), (11, 1, 1, 1), (11, 1, 1, 1), (11, 2, 2, 2), "
      "(NULL, 7, -3, 5), (NULL, NULL, NULL, NULL)");
  const std::string sql =
      "SELECT g, count(*), count(a), sum(a), avg(a), min(a), max(a), sum(b), avg(b), min(b), max(b), "
      "sum(c), avg(c), min(c), max(c), avg(b) FILTER (WHERE b > 0), count(*) FILTER (WHERE b > 0), "
      "max(c) FILTER (WHERE b > 0) FROM t GROUP BY g";
  const auto engine = rows_on("cpu", sql);
  const auto generic = rows_on("generic", sql);
  ASSERT_EQ(engine.size(), 12u);
  ASSERT_EQ(engine, generic);

  // PostgreSQL 15's answer (psql -At -F'|' on the same table, 2026-11-22;
  // NULL as an empty field), sorted as the rows are.
  std::vector<std::string> expected = {
      "1|2|2|3|1.5000000000000000|1|2|3|1.5000000000000000|1|2|3|1.5000000000000000|1|2|1.5000000000000000|2|2",
      "2|1|1|1|1.00000000000000000000|1|1|1|1.00000000000000000000|1|1|1|1.00000000000000000000|1|1|1.00000000000000000000|1|1",
      "3|2|2|-3|-1.5000000000000000|-2|-1|-3|-1.5000000000000000|-2|-1|-3|-1.5000000000000000|-2|-1||0|",
      "4|1|1|0|0.00000000000000000000|0|0|0|0.00000000000000000000|0|0|0|0.00000000000000000000|0|0||0|",
      "5|3|3|4|1.3333333333333333|1|2|4|1.3333333333333333|1|2|4|1.3333333333333333|1|2|1.3333333333333333|3|2",
      "6|3|3|30000|10000.0000000000000000|9999|10001|30000|10000.0000000000000000|9999|10001|30000|"
      "10000.0000000000000000|9999|10001|10000.0000000000000000|3|10001",
      "7|2|2|65534|32767.000000000000|32767|32767|4294967294|2147483647.00000000|2147483647|2147483647|"
      "18446744073709551613|9223372036854775807|9223372036854775806|9223372036854775807|2147483647.00000000|2|"
      "9223372036854775807",
      "8|2|2|-65536|-32768.000000000000|-32768|-32768|-4294967296|-2147483648.00000000|-2147483648|-2147483648|"
      "-18446744073709551616|-9223372036854775808|-9223372036854775808|-9223372036854775808||0|",
      "9|2|0||||||||||||||0|",
      "10|2|1|3|3.0000000000000000|3|3|-2|-1.00000000000000000000|-7|5|-1|-0.50000000000000000000|-123456789013|"
      "123456789012|5.0000000000000000|1|-123456789013",
      "11|7|7|8|1.1428571428571429|1|2|8|1.1428571428571429|1|2|8|1.1428571428571429|1|2|1.1428571428571429|7|2",
      "|2|1|7|7.0000000000000000|7|7|-3|-3.0000000000000000|-3|-3|5|5.0000000000000000|5|5||0|",
  };
  std::vector<std::string> got;
  for (const auto& row : engine) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) line += (c ? "|" : "") + row[c].value_or("");
    got.push_back(line);
  }
  std::sort(got.begin(), got.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(got, expected);
}

}  // namespace
}  // namespace tally::executor
