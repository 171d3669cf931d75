#pragma once
// The ten db-benchmark groupby questions (h2oai/db-benchmark, duckdb/groupby-duckdb.R
// and the other SQL solutions), in PostgreSQL's dialect, each with the check
// query the benchmark runs over its answer `ans` (sums of the answer's columns)
// and the columns that order `ans` for a row-by-row comparison between systems.
#include <array>

namespace tally::bench::h2o {

struct Question {
  const char* id;        // q1 .. q10
  const char* title;     // db-benchmark's question name
  const char* sql;       // the question; the benchmark runs CREATE TABLE ans AS <sql>
  const char* check;     // the benchmark's check query over ans
  const char* order_by;  // orders ans completely (every group key; q8 also its value)
};

// The data set's table, as db-benchmark's SQL solutions declare it.
inline constexpr const char* kCreateTable =
    "CREATE TABLE x (id1 varchar, id2 varchar, id3 varchar, id4 int, id5 int, id6 int, v1 int, v2 int, "
    "v3 double precision)";

inline constexpr std::array<Question, 10> kQuestions = {{
    {"q1", "sum v1 by id1", "SELECT id1, sum(v1) AS v1 FROM x GROUP BY id1", "SELECT sum(v1) AS v1 FROM ans", "id1"},
    {"q2", "sum v1 by id1:id2", "SELECT id1, id2, sum(v1) AS v1 FROM x GROUP BY id1, id2",
     "SELECT sum(v1) AS v1 FROM ans", "id1, id2"},
    {"q3", "sum v1 mean v3 by id3", "SELECT id3, sum(v1) AS v1, avg(v3) AS v3 FROM x GROUP BY id3",
     "SELECT sum(v1) AS v1, sum(v3) AS v3 FROM ans", "id3"},
    {"q4", "mean v1:v3 by id4", "SELECT id4, avg(v1) AS v1, avg(v2) AS v2, avg(v3) AS v3 FROM x GROUP BY id4",
     "SELECT sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM ans", "id4"},
    {"q5", "sum v1:v3 by id6", "SELECT id6, sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM x GROUP BY id6",
     "SELECT sum(v1) AS v1, sum(v2) AS v2, sum(v3) AS v3 FROM ans", "id6"},
    {"q6", "median v3 sd v3 by id4 id5",
     "SELECT id4, id5, percentile_cont(0.5) WITHIN GROUP (ORDER BY v3) AS median_v3, stddev(v3) AS sd_v3 "
     "FROM x GROUP BY id4, id5",
     "SELECT sum(median_v3) AS median_v3, sum(sd_v3) AS sd_v3 FROM ans", "id4, id5"},
    {"q7", "max v1 - min v2 by id3", "SELECT id3, max(v1) - min(v2) AS range_v1_v2 FROM x GROUP BY id3",
     "SELECT sum(range_v1_v2) AS range_v1_v2 FROM ans", "id3"},
    {"q8", "largest two v3 by id6",
     "SELECT id6, largest2_v3 FROM (SELECT id6, v3 AS largest2_v3, row_number() OVER (PARTITION BY id6 "
     "ORDER BY v3 DESC) AS order_v3 FROM x WHERE v3 IS NOT NULL) sub_query WHERE order_v3 <= 2",
     "SELECT sum(largest2_v3) AS largest2_v3 FROM ans", "id6, largest2_v3"},
    {"q9", "regression v1 v2 by id2 id4", "SELECT id2, id4, power(corr(v1, v2), 2) AS r2 FROM x GROUP BY id2, id4",
     "SELECT sum(r2) AS r2 FROM ans", "id2, id4"},
    {"q10", "sum v3 count by id1:id6",
     "SELECT id1, id2, id3, id4, id5, id6, sum(v3) AS v3, count(*) AS count FROM x "
     "GROUP BY id1, id2, id3, id4, id5, id6",
     "SELECT sum(v3) AS v3, sum(count) AS count FROM ans", "id1, id2, id3, id4, id5, id6"},
}};

}  // namespace tally::bench::h2o
